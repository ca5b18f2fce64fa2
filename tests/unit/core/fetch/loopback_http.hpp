// A tiny HTTP/1.1 server on 127.0.0.1 for unit tests: one thread, one connection at a time, every
// answer closes its connection. A test gives it a handler that sees each request (path, Range
// header) and returns the raw bytes to send, optionally cutting the connection after a prefix.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cudaenv::test {

struct HttpRequest {
    std::string method;
    std::string path;
    std::string range; ///< the Range header's value; empty when none
};

struct HttpAnswer {
    std::string raw; ///< status line, headers and body, exactly as sent
    /// Bytes of `raw` to send before closing (a connection cut mid-body); all when npos.
    std::size_t cut_after = std::string::npos;

    /// A 200 with the body (Content-Length set).
    static HttpAnswer ok(const std::string& body) { return status(200, "OK", body); }

    static HttpAnswer
    status(int code, const std::string& reason, const std::string& body, std::string extra = {}) {
        return {"HTTP/1.1 " + std::to_string(code) + " " + reason + "\r\nContent-Length: " +
                std::to_string(body.size()) + "\r\nConnection: close\r\n" + extra + "\r\n" + body};
    }

    /// A 206 for bytes [from, end) of `whole`.
    static HttpAnswer partial(const std::string& whole, std::size_t from) {
        std::string body = whole.substr(from);
        return status(206,
                      "Partial Content",
                      body,
                      "Content-Range: bytes " + std::to_string(from) + "-" +
                          std::to_string(whole.size() - 1) + "/" + std::to_string(whole.size()) +
                          "\r\n");
    }

    /// Headers promising `declared` bytes, then only `sent` of `body`, then the connection cut.
    static HttpAnswer cut(const std::string& body, std::size_t sent) {
        auto a = ok(body);
        a.cut_after = a.raw.size() - body.size() + sent;
        return a;
    }
};

class LoopbackHttp {
  public:
    using Handler = std::function<HttpAnswer(const HttpRequest&)>;

    explicit LoopbackHttp(Handler handler) : m_handler(std::move(handler)) {
        m_listen = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        if (m_listen < 0 ||
            ::bind(m_listen, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
            ::listen(m_listen, 16) != 0) {
            std::abort();
        }
        socklen_t len = sizeof addr;
        ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&addr), &len);
        m_port = ntohs(addr.sin_port);
        m_thread = std::thread([this] { serve(); });
    }

    LoopbackHttp(const LoopbackHttp&) = delete;
    LoopbackHttp& operator=(const LoopbackHttp&) = delete;

    ~LoopbackHttp() {
        m_stop = true;
        m_thread.join();
        ::close(m_listen);
    }

    /// "http://127.0.0.1:PORT" + path
    std::string url(const std::string& path = "") const {
        return "http://127.0.0.1:" + std::to_string(m_port) + path;
    }

    std::vector<HttpRequest> requests() const {
        std::lock_guard<std::mutex> g(m_mutex);
        return m_requests;
    }

  private:
    static std::string header(const std::string& head, const std::string& name) {
        // case-insensitive search of "\r\nName:"
        std::string lower = head;
        for (auto& c : lower) {
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        auto at = lower.find("\r\n" + name + ":");
        if (at == std::string::npos) {
            return {};
        }
        auto start = at + 2 + name.size() + 1;
        auto end = head.find("\r\n", start);
        std::string v = head.substr(start, end - start);
        while (!v.empty() && v.front() == ' ') {
            v.erase(0, 1);
        }
        return v;
    }

    void serve() {
        while (!m_stop) {
            pollfd p{m_listen, POLLIN, 0};
            if (::poll(&p, 1, 20) <= 0) {
                continue;
            }
            int c = ::accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC);
            if (c < 0) {
                continue;
            }
            std::string head;
            char buf[4096];
            while (head.find("\r\n\r\n") == std::string::npos) {
                pollfd q{c, POLLIN, 0};
                if (::poll(&q, 1, 2000) <= 0) {
                    break;
                }
                ssize_t n = ::recv(c, buf, sizeof buf, 0);
                if (n <= 0) {
                    break;
                }
                head.append(buf, static_cast<std::size_t>(n));
            }
            HttpRequest req;
            auto sp1 = head.find(' ');
            auto sp2 = head.find(' ', sp1 + 1);
            if (sp1 != std::string::npos && sp2 != std::string::npos) {
                req.method = head.substr(0, sp1);
                req.path = head.substr(sp1 + 1, sp2 - sp1 - 1);
            }
            req.range = header(head, "range");
            {
                std::lock_guard<std::mutex> g(m_mutex);
                m_requests.push_back(req);
            }
            HttpAnswer a = m_handler(req);
            std::size_t len = std::min(a.cut_after, a.raw.size());
            std::size_t off = 0;
            while (off < len) {
                ssize_t w = ::send(c, a.raw.data() + off, len - off, MSG_NOSIGNAL);
                if (w <= 0) {
                    break;
                }
                off += static_cast<std::size_t>(w);
            }
            ::shutdown(c, SHUT_WR);
            // let the client read all before the close (a close with unread input would reset)
            pollfd q{c, POLLIN, 0};
            while (::poll(&q, 1, 200) > 0 && ::recv(c, buf, sizeof buf, 0) > 0) {
            }
            ::close(c);
        }
    }

    Handler m_handler;
    int m_listen = -1;
    unsigned short m_port = 0;
    std::atomic<bool> m_stop{false};
    mutable std::mutex m_mutex;
    std::vector<HttpRequest> m_requests;
    std::thread m_thread;
};

} // namespace cudaenv::test
