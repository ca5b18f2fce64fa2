// Verified downloads (fetch/download, docs/reliability.md R1, R2, R10) against a loopback HTTP
// server: the hash taken while streaming, the size cap, resuming a .partial file only onto a
// matching 206, retries of 5xx and cut connections, and what is left on disk each way.
#include "core/fetch/download.hpp"
#include "core/sha256.hpp"
#include "loopback_http.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>

using namespace cudaenv;
using test::HttpAnswer;
using test::HttpRequest;
using test::LoopbackHttp;

namespace fs = std::filesystem;

namespace {

std::string body_of(std::size_t n) {
    std::string s;
    s.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        s.push_back(static_cast<char>('a' + (i * 7 + i / 13) % 26));
    }
    return s;
}

class Download : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(fetch::global_init());
        policy.allow_http = true; // the loopback server has no TLS
        policy.connect_timeout_s = 5;
        policy.low_speed_time_s = 5;
        policy.max_attempts = 3;
        policy.backoff = std::chrono::milliseconds(1);
    }

    fetch::Request request(const LoopbackHttp& server, const std::string& want) const {
        fetch::Request r;
        r.url = server.url("/f.tar.xz");
        r.dest = dest();
        r.sha256 = sha256_hex(want);
        r.size = want.size();
        return r;
    }

    fs::path dest() const { return tmp.path() / "f.tar.xz"; }

    fs::path partial() const { return tmp.path() / "f.tar.xz.partial"; }

    test::TempDir tmp;
    fetch::Policy policy;
    const std::string body = body_of(100000);
};

TEST_F(Download, AVerifiedBodyIsRenamedIntoPlace) {
    LoopbackHttp server([&](const HttpRequest&) { return HttpAnswer::ok(body); });
    std::uint64_t last_done = 0;
    std::optional<std::uint64_t> last_total;
    auto got = fetch::download(
        request(server, body), policy, [&](std::uint64_t done, std::optional<std::uint64_t> total) {
            EXPECT_GE(done, last_done);
            last_done = done;
            last_total = total;
        });
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_FALSE(got->cached);
    EXPECT_EQ(got->bytes, body.size());
    EXPECT_EQ(got->attempts, 1);
    EXPECT_EQ(got->resumed_from, 0u);
    EXPECT_EQ(test::read_all(dest()), body);
    EXPECT_FALSE(fs::exists(partial()));
    EXPECT_EQ(last_done, body.size());
    EXPECT_EQ(last_total, body.size());
    ASSERT_EQ(server.requests().size(), 1u);
    EXPECT_EQ(server.requests()[0].path, "/f.tar.xz");
    EXPECT_EQ(server.requests()[0].range, "");
}

TEST_F(Download, AWrongHashIsAnIntegrityErrorAndLeavesNothing) {
    LoopbackHttp server([&](const HttpRequest&) { return HttpAnswer::ok(body); });
    auto r = request(server, body);
    r.sha256 = sha256_hex("something else");
    auto got = fetch::download(r, policy);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::integrity);
    EXPECT_NE(got.error().message.find("checksum mismatch"), std::string::npos);
    EXPECT_NE(got.error().message.find(sha256_hex(body)), std::string::npos); // what it got
    EXPECT_FALSE(fs::exists(dest()));
    EXPECT_FALSE(fs::exists(partial()));
    EXPECT_EQ(server.requests().size(), 1u); // a bad hash is not retried
}

TEST_F(Download, AShortBodyOfTheRightPrefixIsASizeMismatch) {
    std::string shorter = body.substr(0, 500);
    LoopbackHttp server([&](const HttpRequest&) { return HttpAnswer::ok(shorter); });
    auto r = request(server, body);
    auto got = fetch::download(r, policy);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::integrity);
    EXPECT_NE(got.error().message.find("size mismatch"), std::string::npos) << got.error().message;
    EXPECT_FALSE(fs::exists(dest()));
    EXPECT_FALSE(fs::exists(partial()));
}

TEST_F(Download, ABodyLongerThanTheManifestsSizeIsCut) {
    // Content-Length announces more than the manifest's size: refused before the body
    LoopbackHttp server([&](const HttpRequest&) { return HttpAnswer::ok(body + "trailing"); });
    auto got = fetch::download(request(server, body), policy);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::integrity);
    EXPECT_NE(got.error().message.find("sent more than the 100000 bytes"), std::string::npos)
        << got.error().message;
    EXPECT_FALSE(fs::exists(dest()));
    EXPECT_FALSE(fs::exists(partial()));
}

TEST_F(Download, ABodyWithoutLengthIsCappedWhileItStreams) {
    // no Content-Length: only the write callback can stop it
    std::string big = body_of(300000);
    LoopbackHttp server([&](const HttpRequest&) {
        return HttpAnswer{"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + big};
    });
    fetch::Request r;
    r.url = server.url("/big");
    r.dest = dest();
    r.sha256 = sha256_hex(big);
    r.max_size = 65536;
    auto got = fetch::download(r, policy);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::integrity);
    EXPECT_NE(got.error().message.find("65536"), std::string::npos) << got.error().message;
    EXPECT_FALSE(fs::exists(dest()));
    EXPECT_FALSE(fs::exists(partial()));
}

TEST_F(Download, ABodyWithoutLengthWithinTheCapIsAccepted) {
    LoopbackHttp server([&](const HttpRequest&) {
        return HttpAnswer{"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body};
    });
    fetch::Request r;
    r.url = server.url("/f");
    r.dest = dest();
    r.sha256 = sha256_hex(body);
    r.max_size = body.size();
    auto got = fetch::download(r, policy);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_EQ(test::read_all(dest()), body);
}

TEST_F(Download, APartialFileResumesWithARangeRequest) {
    tmp.write("f.tar.xz.partial", body.substr(0, 40000));
    LoopbackHttp server([&](const HttpRequest& q) {
        return q.range == "bytes=40000-" ? HttpAnswer::partial(body, 40000)
                                         : HttpAnswer::status(400, "Bad", "");
    });
    auto got = fetch::download(request(server, body), policy);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_EQ(got->resumed_from, 40000u);
    EXPECT_EQ(got->bytes, body.size());
    EXPECT_FALSE(got->restarted);
    EXPECT_EQ(test::read_all(dest()), body);
    EXPECT_FALSE(fs::exists(partial()));
    ASSERT_EQ(server.requests().size(), 1u);
}

TEST_F(Download, AFullAnswerToARangeRequestReplacesThePartialFile) {
    tmp.write("f.tar.xz.partial", body.substr(0, 40000));
    LoopbackHttp server([&](const HttpRequest&) { return HttpAnswer::ok(body); });
    auto got = fetch::download(request(server, body), policy);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_EQ(test::read_all(dest()), body); // not 40000 bytes + the whole body again
    EXPECT_EQ(server.requests().size(), 1u);
}

TEST_F(Download, A206ForAnotherRangeIsNeverAppended) {
    tmp.write("f.tar.xz.partial", body.substr(0, 40000));
    LoopbackHttp server([&](const HttpRequest& q) {
        // the first answer claims to start at 0; the retry (no Range any more) gets the whole
        return q.range.empty() ? HttpAnswer::ok(body) : HttpAnswer::partial(body, 0);
    });
    auto got = fetch::download(request(server, body), policy);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_EQ(test::read_all(dest()), body);
    ASSERT_EQ(server.requests().size(), 2u);
    EXPECT_EQ(server.requests()[0].range, "bytes=40000-");
    EXPECT_EQ(server.requests()[1].range, "");
    EXPECT_EQ(got->attempts, 2);
}

TEST_F(Download, A416DropsThePartialFileAndStartsOver) {
    tmp.write("f.tar.xz.partial", body.substr(0, 40000));
    LoopbackHttp server([&](const HttpRequest& q) {
        return q.range.empty() ? HttpAnswer::ok(body)
                               : HttpAnswer::status(416, "Range Not Satisfiable", "");
    });
    auto got = fetch::download(request(server, body), policy);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_EQ(test::read_all(dest()), body);
    EXPECT_EQ(server.requests().size(), 2u);
}

TEST_F(Download, APartialFileOfAnotherFileIsDiscardedOnce) {
    // the partial file's bytes differ from the server's: the resumed whole cannot match
    std::string other = body;
    other[10] = '#';
    tmp.write("f.tar.xz.partial", other.substr(0, 40000));
    LoopbackHttp server([&](const HttpRequest& q) {
        return q.range == "bytes=40000-" ? HttpAnswer::partial(body, 40000) : HttpAnswer::ok(body);
    });
    auto got = fetch::download(request(server, body), policy);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_TRUE(got->restarted);
    EXPECT_EQ(got->attempts, 1); // the restart does not count against the retries
    EXPECT_EQ(test::read_all(dest()), body);
    ASSERT_EQ(server.requests().size(), 2u);
    EXPECT_EQ(server.requests()[1].range, "");
}

TEST_F(Download, ACompletePartialFileIsCheckedAndPublishedWithoutARequest) {
    tmp.write("f.tar.xz.partial", body);
    LoopbackHttp server([&](const HttpRequest&) { return HttpAnswer::status(500, "No", ""); });
    auto got = fetch::download(request(server, body), policy);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_EQ(got->resumed_from, body.size());
    EXPECT_EQ(test::read_all(dest()), body);
    EXPECT_FALSE(fs::exists(partial()));
    EXPECT_TRUE(server.requests().empty());
}

TEST_F(Download, AVerifiedFileAtDestIsCached) {
    tmp.write("f.tar.xz", body);
    LoopbackHttp server([&](const HttpRequest&) { return HttpAnswer::status(500, "No", ""); });
    auto got = fetch::download(request(server, body), policy);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_TRUE(got->cached);
    EXPECT_EQ(got->bytes, body.size());
    EXPECT_TRUE(server.requests().empty());
}

TEST_F(Download, AWrongFileAtDestIsReplaced) {
    tmp.write("f.tar.xz", "poisoned cache");
    LoopbackHttp server([&](const HttpRequest&) { return HttpAnswer::ok(body); });
    auto got = fetch::download(request(server, body), policy);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_FALSE(got->cached);
    EXPECT_EQ(test::read_all(dest()), body);
}

TEST_F(Download, A5xxIsRetriedWithBackoff) {
    std::atomic<int> n{0};
    LoopbackHttp server([&](const HttpRequest&) {
        return n++ == 0 ? HttpAnswer::status(503, "Busy", "try later") : HttpAnswer::ok(body);
    });
    auto got = fetch::download(request(server, body), policy);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_EQ(got->attempts, 2);
    EXPECT_EQ(test::read_all(dest()), body); // the 503's body was not written into the file
    EXPECT_EQ(server.requests().size(), 2u);
}

TEST_F(Download, RetriesRunOutIntoANetworkError) {
    LoopbackHttp server([&](const HttpRequest&) { return HttpAnswer::status(500, "No", "x"); });
    auto got = fetch::download(request(server, body), policy);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::network);
    EXPECT_EQ(exit_code(got.error().code), 3);
    EXPECT_NE(got.error().message.find("HTTP 500"), std::string::npos) << got.error().message;
    EXPECT_NE(got.error().message.find("after 3 attempts"), std::string::npos)
        << got.error().message;
    EXPECT_EQ(server.requests().size(), 3u);
    EXPECT_FALSE(fs::exists(dest()));
    EXPECT_FALSE(fs::exists(partial())); // empty: nothing to resume
}

TEST_F(Download, A4xxIsNotRetried) {
    LoopbackHttp server([&](const HttpRequest&) { return HttpAnswer::status(404, "Gone", "x"); });
    auto got = fetch::download(request(server, body), policy);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::network);
    EXPECT_NE(got.error().message.find("HTTP 404"), std::string::npos) << got.error().message;
    ASSERT_FALSE(got.error().hints.empty());
    EXPECT_NE(got.error().hints[0].find("mirror"), std::string::npos);
    EXPECT_EQ(server.requests().size(), 1u);
    EXPECT_FALSE(fs::exists(partial()));
}

TEST_F(Download, ACutConnectionResumesOnTheNextAttempt) {
    LoopbackHttp server([&](const HttpRequest& q) {
        if (q.range.empty()) {
            return HttpAnswer::cut(body, 30000);
        }
        return q.range == "bytes=30000-" ? HttpAnswer::partial(body, 30000)
                                         : HttpAnswer::status(400, "Bad", "");
    });
    auto got = fetch::download(request(server, body), policy);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_EQ(got->attempts, 2);
    EXPECT_EQ(got->resumed_from, 30000u);
    EXPECT_EQ(test::read_all(dest()), body);
    EXPECT_FALSE(fs::exists(partial()));
}

TEST_F(Download, ACutConnectionKeepsThePartialFileWhenRetriesRunOut) {
    policy.max_attempts = 1;
    {
        LoopbackHttp server([&](const HttpRequest&) { return HttpAnswer::cut(body, 30000); });
        auto got = fetch::download(request(server, body), policy);
        ASSERT_FALSE(got);
        EXPECT_EQ(got.error().code, ErrorCode::network);
        ASSERT_FALSE(got.error().hints.empty());
        EXPECT_NE(got.error().hints[0].find("resume"), std::string::npos);
        EXPECT_FALSE(fs::exists(dest()));
        EXPECT_EQ(test::read_all(partial()), body.substr(0, 30000));
    }
    // the next run resumes it
    LoopbackHttp server([&](const HttpRequest& q) {
        return q.range == "bytes=30000-" ? HttpAnswer::partial(body, 30000)
                                         : HttpAnswer::status(400, "Bad", "");
    });
    auto again = fetch::download(request(server, body), policy);
    ASSERT_TRUE(again) << again.error().full_message();
    EXPECT_EQ(again->resumed_from, 30000u);
    EXPECT_EQ(test::read_all(dest()), body);
}

TEST_F(Download, PlainHttpIsRefusedUnlessAllowed) {
    LoopbackHttp server([&](const HttpRequest&) { return HttpAnswer::ok(body); });
    policy.allow_http = false;
    auto got = fetch::download(request(server, body), policy);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::network);
    EXPECT_TRUE(server.requests().empty());
    EXPECT_EQ(got.error().message.find("after"), std::string::npos); // not retried
    EXPECT_FALSE(fs::exists(dest()));
}

TEST_F(Download, ARedirectIsFollowedOnAConfiguredHttpMirror) {
    LoopbackHttp server([&](const HttpRequest& q) {
        if (q.path == "/f.tar.xz") {
            return HttpAnswer::status(302, "Found", "", "Location: /elsewhere/f\r\n");
        }
        return HttpAnswer::ok(body);
    });
    auto got = fetch::download(request(server, body), policy);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_EQ(test::read_all(dest()), body);
    ASSERT_EQ(server.requests().size(), 2u);
    EXPECT_EQ(server.requests()[1].path, "/elsewhere/f");
}

TEST_F(Download, ACancelledDownloadKeepsNothingEmpty) {
    LoopbackHttp server([&](const HttpRequest&) { return HttpAnswer::ok(body); });
    std::atomic<bool> cancel{true};
    auto r = request(server, body);
    r.cancel = &cancel;
    auto got = fetch::download(r, policy);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::failure);
    EXPECT_NE(got.error().message.find("cancelled"), std::string::npos);
    EXPECT_FALSE(fs::exists(dest()));
    EXPECT_FALSE(fs::exists(partial()));
}

TEST_F(Download, ALinkAtThePartialPathIsNeverFollowed) {
    auto victim = tmp.write("victim", "keep me");
    fs::create_symlink(victim, partial());
    LoopbackHttp server([&](const HttpRequest&) { return HttpAnswer::ok(body); });
    auto got = fetch::download(request(server, body), policy);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_EQ(test::read_all(victim), "keep me");
    EXPECT_EQ(test::read_all(dest()), body);
    EXPECT_FALSE(fs::is_symlink(dest()));
}

TEST_F(Download, AHardLinkedPartialFileIsRefused) {
    auto other = tmp.write("other", body.substr(0, 100));
    fs::create_hard_link(other, partial());
    LoopbackHttp server([&](const HttpRequest&) { return HttpAnswer::ok(body); });
    auto got = fetch::download(request(server, body), policy);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::unsafe_archive);
    EXPECT_EQ(test::read_all(other), body.substr(0, 100));
}

TEST_F(Download, HashFileGivesTheSha256AndSize) {
    auto p = tmp.write("x", body);
    auto h = fetch::hash_file(p);
    ASSERT_TRUE(h) << h.error().full_message();
    EXPECT_EQ(h->sha256, sha256_hex(body));
    EXPECT_EQ(h->size, body.size());
    auto missing = fetch::hash_file(tmp.path() / "missing");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, ErrorCode::filesystem);
}

TEST_F(Download, FetchTextReadsASmallDocumentAndCapsIt) {
    LoopbackHttp server([&](const HttpRequest& q) {
        if (q.path == "/small") {
            return HttpAnswer::ok("{\"a\": 1}");
        }
        if (q.path == "/big") {
            return HttpAnswer::ok(body);
        }
        return HttpAnswer::status(404, "Gone", "");
    });
    auto small = fetch::fetch_text(server.url("/small"), policy, 1024);
    ASSERT_TRUE(small) << small.error().full_message();
    EXPECT_EQ(*small, "{\"a\": 1}");
    auto big = fetch::fetch_text(server.url("/big"), policy, 1024);
    ASSERT_FALSE(big);
    EXPECT_EQ(big.error().code, ErrorCode::integrity);
    auto gone = fetch::fetch_text(server.url("/gone"), policy, 1024);
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().code, ErrorCode::network);
}

} // namespace
