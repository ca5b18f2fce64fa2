// write_file_atomic through a Disk that fails one system call at a time, and the sweep of
// temporary names: the old file survives every fault, and no temporary file is left behind.
#include "core/fs.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

namespace fs = std::filesystem;
using namespace cudaenv;

namespace {

std::set<std::string> names_in(const fs::path& dir) {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) {
        out.insert(e.path().filename().string());
    }
    return out;
}

/// Fails the n-th call (counting every call of every kind from 1) with `err`; `short_writes`
/// makes every write take at most 3 bytes, `eintr` makes every other write fail with EINTR.
class FaultyDisk : public Disk {
  public:
    int fail_at = 0;
    int err = EIO;
    bool short_writes = false;
    bool eintr = false;
    mutable int calls = 0;

    int open(int dir, const char* p, int flags, unsigned mode) const override {
        return hit() ? -1 : Disk::open(dir, p, flags, mode);
    }

    long write(int fd, const void* data, std::size_t size) const override {
        if (hit()) {
            return -1;
        }
        if (eintr && (m_writes++ % 2 == 0)) {
            errno = EINTR;
            return -1;
        }
        return Disk::write(fd, data, short_writes ? std::min<std::size_t>(size, 3) : size);
    }

    int fchmod(int fd, unsigned mode) const override { return hit() ? -1 : Disk::fchmod(fd, mode); }

    int fsync(int fd) const override { return hit() ? -1 : Disk::fsync(fd); }

    int close(int fd) const override {
        if (hit()) {
            Disk::close(fd); // close(2) releases the descriptor even when it reports an error
            return -1;
        }
        return Disk::close(fd);
    }

    int rename(int dir, const char* from, const char* to) const override {
        return hit() ? -1 : Disk::rename(dir, from, to);
    }

    int unlink(int dir, const char* p) const override {
        return Disk::unlink(dir, p);
    } // cleanup never fails

  private:
    mutable int m_writes = 0;

    bool hit() const {
        if (++calls == fail_at) {
            errno = err;
            return true;
        }
        return false;
    }
};

} // namespace

TEST(AtomicWrite, EveryFailingCallLeavesTheOldFileAndNoTemporary) {
    test::TempDir d;
    auto target = d.path() / "state.json";
    const std::string old_text = "{\"global\": \"11.8\"}\n";
    const std::string new_text(5000, 'x');
    // Count the calls of a clean write, then fail each one in turn.
    FaultyDisk counter;
    ASSERT_TRUE(write_file_atomic(target, old_text, 0644, counter));
    const int total = counter.calls;
    ASSERT_GE(total, 6); // open, write, fchmod, fsync, close, rename
    for (int errno_value : {EIO, ENOSPC, EXDEV, EROFS}) {
        for (int n = 1; n <= total; ++n) {
            FaultyDisk disk;
            disk.fail_at = n;
            disk.err = errno_value;
            auto st = write_file_atomic(target, new_text, 0644, disk);
            ASSERT_FALSE(st) << "call " << n << " failed, yet the write reported success";
            EXPECT_EQ(st.error().code, ErrorCode::filesystem);
            EXPECT_NE(st.error().message.find(std::strerror(errno_value)), std::string::npos)
                << st.error().message;
            EXPECT_EQ(test::read_all(target), old_text) << "call " << n;
            EXPECT_EQ(names_in(d.path()), std::set<std::string>{"state.json"}) << "call " << n;
        }
    }
}

TEST(AtomicWrite, ShortWritesAndEintrStillWriteEverything) {
    test::TempDir d;
    auto target = d.path() / "f";
    FaultyDisk disk;
    disk.short_writes = true;
    disk.eintr = true;
    std::string text = "0123456789abcdefghij\n";
    ASSERT_TRUE(write_file_atomic(target, text, 0600, disk));
    EXPECT_EQ(test::read_all(target), text);

    struct stat st {};

    ASSERT_EQ(::stat(target.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    EXPECT_EQ(names_in(d.path()), std::set<std::string>{"f"});
}

TEST(AtomicWrite, TheModeIsTheOneAskedForWhateverTheUmask) {
    test::TempDir d;
    auto old = ::umask(077);
    auto st = write_file_atomic(d.path() / "conf", "x\n", 0644);
    ::umask(old);
    ASSERT_TRUE(st);

    struct stat s {};

    ASSERT_EQ(::stat((d.path() / "conf").c_str(), &s), 0);
    EXPECT_EQ(s.st_mode & 07777, 0644u);
}

TEST(AtomicWrite, ATakenTemporaryNameIsSkippedNeverTouched) {
    test::TempDir d;

    // Every open says EEXIST for the first three names: the fourth is used, nothing is deleted.
    class Taken : public Disk {
      public:
        mutable int opens = 0;

        int open(int dir, const char* p, int flags, unsigned mode) const override {
            if (++opens <= 3) {
                errno = EEXIST;
                return -1;
            }
            return Disk::open(dir, p, flags, mode);
        }

        int unlink(int, const char*) const override {
            ADD_FAILURE() << "nothing may be unlinked";
            return -1;
        }
    } disk;

    std::ofstream(d.path() / "planted") << "theirs";
    ASSERT_TRUE(write_file_atomic(d.path() / "f", "mine", 0644, disk));
    EXPECT_EQ(disk.opens, 4);
    EXPECT_EQ(test::read_all(d.path() / "planted"), "theirs");
    EXPECT_EQ(test::read_all(d.path() / "f"), "mine");
}

TEST(SweepTempFiles, RemovesOnlyOurOwnTemporaryFiles) {
    test::TempDir d;
    const std::string ours = temp_name("state.json");
    ASSERT_TRUE(is_temp_name(ours, "state.json"));
    std::ofstream(d.path() / ours) << "half";
    std::ofstream(d.path() / "state.json") << "whole";
    std::ofstream(d.path() / ".state.json.tmp-short") << "not our shape";
    std::ofstream(d.path() / temp_name("other.json")) << "another base";
    fs::create_directory(d.path() / temp_name("state.json")); // a folder at one of our names
    auto planted_link = temp_name("state.json");
    fs::create_symlink("/etc/passwd", d.path() / planted_link); // a link at one of our names
    auto before = names_in(d.path());
    sweep_temp_files(d.path(), "state.json");
    auto after = names_in(d.path());
    EXPECT_EQ(after.count(ours), 0u);
    before.erase(ours);
    EXPECT_EQ(after, before);
    EXPECT_TRUE(fs::is_symlink(d.path() / planted_link));
}

namespace {

unsigned mode_of(const fs::path& p) {
    struct stat st {};

    return ::lstat(p.c_str(), &st) == 0 ? st.st_mode & 07777 : 0u;
}

/// Sets the umask for one scope.
struct Umask {
    explicit Umask(mode_t m) : old(::umask(m)) {}

    ~Umask() { ::umask(old); }

    mode_t old;
};

} // namespace

TEST(MakeDirs, EveryFolderMadeIsOpenToAllWhateverTheUmask) {
    test::TempDir d;
    fs::create_directory(d.path() / "mine");
    fs::permissions(d.path() / "mine", fs::perms(0750));
    Umask strict(077);
    ASSERT_TRUE(make_dirs(d.path() / "mine" / "a" / "b" / "c"));
    EXPECT_EQ(mode_of(d.path() / "mine"), 0750u); // it existed: kept as it was
    for (const auto* rel : {"mine/a", "mine/a/b", "mine/a/b/c"}) {
        EXPECT_EQ(mode_of(d.path() / rel), 0755u) << rel;
    }
    ASSERT_TRUE(make_dirs(d.path() / "mine" / "a" / "b" / "c")); // again: nothing to do
    std::ofstream(d.path() / "file") << "x";
    auto st = make_dirs(d.path() / "file" / "sub");
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().code, ErrorCode::filesystem);
}

TEST(Contained, ALinkAnywhereBelowTheBaseIsRefusedAndNothingIsWrittenOutside) {
    test::TempDir d;
    fs::create_directory(d.path() / "outside");
    fs::create_directories(d.path() / "base" / "a");
    fs::create_directory_symlink(d.path() / "outside", d.path() / "base" / "a" / "b");
    auto base = Contained::open(d.path() / "base", false);
    ASSERT_TRUE(base);
    for (const auto* rel : {"a/b", "a/b/c", "a/b/c/d"}) {
        auto dir = base->dir(rel, true);
        ASSERT_FALSE(dir) << rel;
        EXPECT_EQ(dir.error().code, ErrorCode::unsafe_archive);
        EXPECT_NE(dir.error().message.find("a link (to '" + (d.path() / "outside").string() + "')"),
                  std::string::npos)
            << dir.error().message;
    }
    auto st = base->write_file("a/b/file", "mine");
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().code, ErrorCode::unsafe_archive);
    EXPECT_TRUE(fs::is_empty(d.path() / "outside"));
    for (const auto* rel : {"../outside", "a/../../outside", "/tmp", "a/./b"}) {
        auto dir = base->dir(rel, true);
        ASSERT_FALSE(dir) << rel;
        EXPECT_EQ(dir.error().code, ErrorCode::unsafe_archive) << rel;
    }
    EXPECT_TRUE(fs::is_empty(d.path() / "outside"));
}

TEST(Contained, WritesMakeFoldersOpenToAllAndReplaceALinkAtTheFileItself) {
    test::TempDir d;
    std::ofstream(d.path() / "theirs") << "theirs";
    Umask strict(077);
    auto base = Contained::open(d.path() / "new" / "base", true);
    ASSERT_TRUE(base);
    EXPECT_EQ(mode_of(d.path() / "new"), 0755u);
    EXPECT_EQ(mode_of(d.path() / "new" / "base"), 0755u);
    ASSERT_TRUE(base->write_file("x/y/file", "one"));
    EXPECT_EQ(mode_of(base->path() / "x"), 0755u);
    EXPECT_EQ(mode_of(base->path() / "x" / "y"), 0755u);
    EXPECT_EQ(mode_of(base->path() / "x" / "y" / "file"), 0644u);
    fs::remove(base->path() / "x" / "y" / "file");
    fs::create_symlink(d.path() / "theirs", base->path() / "x" / "y" / "file");
    auto read = base->open_file("x/y/file"); // a link is never read through either
    ASSERT_FALSE(read);
    EXPECT_EQ(read.error().code, ErrorCode::unsafe_archive);
    ASSERT_TRUE(base->write_file("x/y/file", "two"));
    EXPECT_FALSE(fs::is_symlink(base->path() / "x" / "y" / "file"));
    EXPECT_EQ(test::read_all(base->path() / "x" / "y" / "file"), "two");
    EXPECT_EQ(test::read_all(d.path() / "theirs"), "theirs");
    auto fd = base->open_file("x/y/file");
    ASSERT_TRUE(fd);
    EXPECT_EQ(*read_text_fd(fd->get(), "file"), "two");
}

TEST(TempDirTest, ItsTreeGoesWithItOnEveryPathOutUnlessReleased) {
    test::TempDir t;
    fs::path made;
    {
        auto d = TempDir::make(t.path(), "stage");
        ASSERT_TRUE(d) << d.error().message;
        made = d->path();
        EXPECT_EQ(made.parent_path(), t.path());
        EXPECT_EQ(made.filename().string().rfind("stage-", 0), 0u);
        EXPECT_EQ(fs::status(made).permissions() & fs::perms::all, fs::perms(0700));
        std::ofstream(made / "file") << "x";
        fs::create_directories(made / "a" / "b");
        // a link inside is removed, never followed
        fs::create_directory(t.path() / "outside");
        std::ofstream(t.path() / "outside" / "kept") << "y";
        fs::create_directory_symlink(t.path() / "outside", made / "a" / "link");
        TempDir moved = std::move(d).value();
        EXPECT_EQ(moved.path(), made);
    }
    EXPECT_FALSE(fs::exists(fs::symlink_status(made)));
    EXPECT_TRUE(fs::exists(t.path() / "outside" / "kept"));

    auto kept = TempDir::make(t.path(), "published");
    ASSERT_TRUE(kept);
    fs::path published = t.path() / "final";
    ASSERT_EQ(::rename(kept->path().c_str(), published.c_str()), 0);
    fs::path was = kept->path();
    kept->release();
    EXPECT_TRUE(kept->path().empty());
    kept = TempDir::make(t.path(), "again"); // assignment removes the one it held, if any
    ASSERT_TRUE(kept);
    fs::path again = kept->path();
    *kept = std::move(TempDir::make(t.path(), "third")).value();
    EXPECT_FALSE(fs::exists(again));
    EXPECT_TRUE(fs::exists(published));
    EXPECT_FALSE(fs::exists(was));
}

TEST(TempDirTest, AParentThatIsNotThereIsAFilesystemErrorNamingIt) {
    test::TempDir t;
    auto d = TempDir::make(t.path() / "missing", "stage");
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().code, ErrorCode::filesystem);
    EXPECT_NE(d.error().message.find((t.path() / "missing").string()), std::string::npos);
}

TEST(FdTest, ClosesOnceWhenItGoesAndHandsOverOnMoveOrRelease) {
    test::TempDir t;
    auto p = t.write("f", "data");
    int raw = -1;
    {
        Fd a(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
        ASSERT_TRUE(a.valid());
        raw = a.get();
        Fd b = std::move(a);
        EXPECT_FALSE(a.valid());
        EXPECT_EQ(b.get(), raw);
        EXPECT_NE(::fcntl(raw, F_GETFD), -1);
    }
    EXPECT_EQ(::fcntl(raw, F_GETFD), -1); // closed when b went
    EXPECT_EQ(errno, EBADF);

    Fd c(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
    int kept = c.release();
    EXPECT_FALSE(c.valid());
    EXPECT_NE(::fcntl(kept, F_GETFD), -1); // released: not closed
    Fd d(kept);
    EXPECT_EQ(d.close(), 0);
    EXPECT_EQ(d.close(), 0); // a second close is nothing, not another close(2)
    EXPECT_FALSE(d.valid());
}
