#include "core/archive/links.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <linux/openat2.h>
#include <optional>

using namespace cudaenv;
using namespace cudaenv::archive;
namespace fs = std::filesystem;

namespace {

struct Tree {
    test::TempDir t;
    fs::path root = t.path() / "v";

    Tree() { fs::create_directories(root); }

    void dir(const std::string& rel) { fs::create_directories(root / rel); }

    void file(const std::string& rel) const { t.write("v/" + rel, "x"); }

    void link(const std::string& rel, const std::string& target) {
        fs::create_directories((root / rel).parent_path());
        fs::create_symlink(target, root / rel);
    }

    /// The kernel's own answer, where it has openat2: RESOLVE_BENEATH refuses with EXDEV what
    /// climbs out, ELOOP a loop. Lets the tests check the resolver against the real thing.
    std::optional<Resolution> kernel(const std::string& rel) const {
        int dfd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        struct open_how how {};

        how.flags = O_PATH | O_CLOEXEC;
        how.resolve = RESOLVE_BENEATH;
        long fd = ::syscall(SYS_openat2, dfd, rel.c_str(), &how, sizeof how);
        int err = errno;
        ::close(dfd);
        if (fd >= 0) {
            ::close(static_cast<int>(fd));
            return Resolution::inside;
        }
        if (err == ENOSYS) {
            return std::nullopt;
        }
        if (err == EXDEV) {
            return Resolution::escapes;
        }
        if (err == ELOOP) {
            return Resolution::loops;
        }
        return Resolution::inside; // ENOENT, ENOTDIR: it stops inside
    }
};

void expect(const Tree& t, const std::string& rel, Resolution want) {
    EXPECT_EQ(resolve_beneath(t.root, rel), want) << rel;
    if (auto k = t.kernel(rel)) {
        EXPECT_EQ(*k, want) << rel << ": the kernel disagrees";
    }
}

} // namespace

TEST(Links, PlainLinksAndSonameChainsStayInside) {
    Tree t;
    t.file("lib64/libcudart.so.11.8.89");
    t.link("lib64/libcudart.so.11.0", "libcudart.so.11.8.89");
    t.link("lib64/libcudart.so", "libcudart.so.11.0");
    t.link("lib", "lib64");
    t.link("targets/x86_64-linux/lib", "../../lib64");
    expect(t, "lib64/libcudart.so", Resolution::inside);
    expect(t, "lib/libcudart.so", Resolution::inside);
    expect(t, "targets/x86_64-linux/lib/libcudart.so", Resolution::inside);
    EXPECT_FALSE(find_bad_link(t.root));
}

TEST(Links, AChainThatClimbsThroughAnotherLinkEscapes) {
    Tree t;
    t.link("lib/s", "..");                 // the root, as text and as followed
    t.link("lib/x", "s/../../etc/passwd"); // as text: etc/passwd inside; followed: outside
    expect(t, "lib/x", Resolution::escapes);
    auto bad = find_bad_link(t.root);
    ASSERT_TRUE(bad);
    EXPECT_EQ(bad->path, "lib/x");
    EXPECT_EQ(bad->why, Resolution::escapes);
}

TEST(Links, ADeepLinkMakesDotDotClimbFurtherThanTheTextSays) {
    Tree t;
    t.dir("include/a/b");
    t.link("include/up", "a/b/../..");
    t.link("lib/deep", "../include/up/..");    // the root
    t.link("lib/libx.so", "deep/../victim/f"); // as text: lib/victim/f
    t.link("lib/ok.so", "deep/include/a");     // through the same links, staying inside
    expect(t, "lib/deep", Resolution::inside);
    expect(t, "lib/ok.so", Resolution::inside);
    expect(t, "lib/libx.so", Resolution::escapes);
}

TEST(Links, DotDotAfterALinkToASubfolderStaysInside) {
    Tree t;
    t.dir("lib64/sub");
    t.file("lib64/y");
    t.link("lib", "lib64/sub");
    t.link("x", "lib/../y"); // lib64/sub/.. = lib64: inside, though the text says ./y
    expect(t, "x", Resolution::inside);
}

TEST(Links, AbsoluteTargetsEscape) {
    Tree t;
    t.link("a", "/etc");
    expect(t, "a", Resolution::escapes);
    t.link("b", "c");
    t.link("c", "/"); // through another link
    EXPECT_EQ(resolve_beneath(t.root, "b"), Resolution::escapes);
}

TEST(Links, LoopsAreLoops) {
    Tree t;
    t.link("l1", "l2");
    t.link("l2", "l1");
    t.link("me", "me/x");
    expect(t, "l1", Resolution::loops);
    expect(t, "me", Resolution::loops);
    auto bad = find_bad_link(t.root);
    ASSERT_TRUE(bad);
    EXPECT_EQ(bad->why, Resolution::loops);
    EXPECT_NE(bad->reason().find("loop"), std::string::npos);
}

TEST(Links, FortyLinksAreAllowedAndFortyOneAreALoop) {
    Tree t;
    t.file("end");
    for (int i = 0; i < 41; ++i) {
        t.link("c" + std::to_string(i), i == 0 ? "end" : "c" + std::to_string(i - 1));
    }
    expect(t, "c39", Resolution::inside); // 40 links
    expect(t, "c40", Resolution::loops);  // 41
}

TEST(Links, DanglingLinksAndPathsThroughFilesStopInside) {
    Tree t;
    t.file("f");
    t.link("d", "nothing/../../../etc"); // ENOENT at "nothing": the kernel never climbs
    t.link("g", "f/../../etc");          // ENOTDIR at "f"
    expect(t, "d", Resolution::inside);
    expect(t, "g", Resolution::inside);
}
