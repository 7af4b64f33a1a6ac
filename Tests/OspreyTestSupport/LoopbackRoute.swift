import Foundation
import NIOCore

/// The routes of ``LoopbackOrigin`` (rule 2 of its documentation), picked by the path's first
/// component. Made and run on the connection's event loop.
struct LoopbackRoute {
    let origin: LoopbackOrigin
    let handler: LoopbackOriginHandler
    let context: ChannelHandlerContext
    let uri: String
    /// The path's components.
    let parts: [String]
    /// The request's headers, names lowercased.
    let headers: [String: String]

    private var image: Data { origin.image }
    private var jpeg: [(String, String)] { [("Content-Type", "image/jpeg")] }
    private var second: String { parts.count > 1 ? parts[1] : "default" }

    private var query: [String: String] {
        let items = URLComponents(string: uri)?.queryItems ?? []
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
    }

    /// Answers the request when a route matches; false when none does.
    func run() -> Bool {
        switch parts.first ?? "" {
        case "image": handler.send(context, status: 200, headers: jpeg, body: image)
        case "gated": gated()
        case "gatedchunked": gatedChunked()
        case "chunked": chunked()
        case "status":
            let code = parts.count > 1 ? Int(parts[1]) ?? 500 : 500
            let retry = code == 429 || code == 503 ? [("Retry-After", "1")] : []
            handler.send(context, status: code, headers: [("Content-Type", "text/plain")] + retry, body: Data("status \(code)".utf8))
        case "html":
            handler.send(context, status: 200, headers: [("Content-Type", "text/html")], body: Data("<html><body>not an image</body></html>".utf8))
        case "redirect":
            let n = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            if n <= 0 {
                handler.send(context, status: 200, headers: jpeg, body: image)
            } else {
                handler.send(context, status: 302, headers: [("Location", "/redirect/\(n - 1)")], body: Data())
            }
        case "flaky":
            let code = Int(query["code"] ?? "503") ?? 503
            if origin.snapshot.hits[uri, default: 0] <= Int(query["fail"] ?? "1") ?? 1 {
                handler.send(context, status: code, headers: [("Retry-After", "0")], body: Data("try again".utf8))
            } else {
                handler.send(context, status: 200, headers: jpeg, body: image)
            }
        case "resumable": resumable()
        case "gatedresumable": gatedResumable()
        case "conditional", "maxage": conditional()
        case "drop":
            handler.writeHead(context, status: 200, headers: jpeg + [("Content-Length", "\(image.count)")])
            handler.writeBody(context, image.prefix(image.count / 2), flush: true)
            handler.drop(context)
        case "hangup":
            if origin.snapshot.hits[uri, default: 0] <= Int(query["times"] ?? "1") ?? 1 {
                handler.drop(context)
            } else {
                handler.send(context, status: 200, headers: jpeg, body: image)
            }
        case "auth":
            if headers["authorization"] == "Basic dXNlcjpwYXNz" {
                handler.send(context, status: 200, headers: jpeg, body: image)
            } else {
                handler.send(context, status: 401, headers: [("WWW-Authenticate", "Basic realm=\"osprey\"")], body: Data("no".utf8))
            }
        case "paced": paced()
        case "slow": slow()
        case "delay": delay()
        case "held":
            let path = "/" + parts.joined(separator: "/")
            handler.whenOpen(context, origin, gate: "held") { [origin] handler, context in handler.plain(context, origin, Substring(path)) }
        default: return fault()
        }
        return true
    }

    /// `/gated/<gate>/…`: the body set as `<gate>` up to its cut (or the image's first 100 bytes), the
    /// rest once the gate opens.
    private func gated() {
        let entry = origin.body(second)
        let body = entry?.body ?? image
        let cut = min(max(0, entry?.cuts.first ?? 100), body.count)
        let type = entry == nil ? "image/jpeg" : "application/octet-stream"
        sendGated(body, headers: [("Content-Type", type), ("Content-Length", "\(body.count)")], firstBytes: cut)
    }

    private func gatedChunked() {
        sendGated(image, headers: jpeg, firstBytes: 2048)
    }

    /// Sends `200` with `headers` and the first `count` bytes of `body` now, the rest when the gate opens.
    private func sendGated(_ body: Data, headers: [(String, String)], firstBytes count: Int) {
        handler.writeHead(context, status: 200, headers: headers)
        handler.writeBody(context, body.prefix(count), flush: true)
        let rest = body.dropFirst(count)
        handler.whenOpen(context, origin, gate: second) { handler, context in
            handler.writeBody(context, rest, flush: false)
            handler.end(context)
        }
    }

    private func chunked() {
        handler.writeHead(context, status: 200, headers: jpeg)
        var offset = 0
        while offset < image.count {
            handler.writeBody(context, image[offset..<min(offset + 1024, image.count)], flush: true)
            offset += 1024
        }
        handler.end(context)
    }

    /// The JPEG's headers for a resumable answer: byte ranges and a strong validator.
    private var resumableHeaders: [(String, String)] { jpeg + [("Accept-Ranges", "bytes"), ("ETag", "\"v1\"")] }

    /// Sends the rest of the image from the offset the request resumes at (`206`), if it resumes.
    private func sendResumedRange() -> Bool {
        guard let start = resumeOffset() else { return false }
        let range = [("Content-Range", "bytes \(start)-\(image.count - 1)/\(image.count)")]
        handler.send(context, status: 206, headers: resumableHeaders + range, body: image.dropFirst(start))
        return true
    }

    private func resumable() {
        let common = resumableHeaders
        if origin.snapshot.hits[uri, default: 0] == 1 {
            handler.writeHead(context, status: 200, headers: common + [("Content-Length", "\(image.count)")])
            handler.writeBody(context, image.prefix(image.count / 2), flush: true)
            handler.drop(context)
        } else if !sendResumedRange() {
            handler.send(context, status: 200, headers: common, body: image)
        }
    }

    private func gatedResumable() {
        if sendResumedRange() { return }
        sendGated(image, headers: resumableHeaders + [("Content-Length", "\(image.count)")], firstBytes: 100)
    }

    /// `/conditional/…` and `/maxage/<seconds>/…`: `ETag: "v1"` (and the max-age), `304` to a match.
    private func conditional() {
        var validators = [("ETag", "\"v1\"")]
        if parts.first == "maxage" { validators.append(("Cache-Control", "max-age=\(parts.count > 1 ? parts[1] : "0")")) }
        if headers["if-none-match"] == "\"v1\"" {
            handler.send(context, status: 304, headers: validators, body: Data())
        } else {
            handler.send(context, status: 200, headers: jpeg + validators, body: image)
        }
    }

    /// `/paced/<name>/…`: the head at once, piece `i` once gate `<name>-<i>` opens.
    private func paced() {
        guard parts.count > 1, let entry = origin.body(parts[1]) else { return handler.notFound(context) }
        let body = entry.body
        handler.writeHead(context, status: 200, headers: jpeg + [("Content-Length", "\(body.count)")])
        context.flush()
        let edges = [0] + entry.cuts.filter { $0 > 0 && $0 < body.count } + [body.count]
        Self.piece(handler, context, origin, name: parts[1], index: 0, edges: edges, body: body)
    }

    private static func piece(
        _ handler: LoopbackOriginHandler, _ context: ChannelHandlerContext, _ origin: LoopbackOrigin, name: String, index: Int, edges: [Int],
        body: Data
    ) {
        guard index + 1 < edges.count else { return handler.end(context) }
        handler.whenOpen(context, origin, gate: "\(name)-\(index)") { handler, context in
            handler.writeBody(context, body[edges[index]..<edges[index + 1]], flush: true)
            piece(handler, context, origin, name: name, index: index + 1, edges: edges, body: body)
        }
    }

    /// `/slow/<name>/…?chunk=&pause=`: the body set as `<name>` at that pace.
    private func slow() {
        guard parts.count > 1, let body = origin.body(parts[1])?.body else { return handler.notFound(context) }
        handler.writeHead(context, status: 200, headers: jpeg + [("Content-Length", "\(body.count)")])
        let query = self.query
        let chunk = max(1, Int(query["chunk"] ?? "4096") ?? 4096)
        let pause = TimeAmount.milliseconds(Int64(query["pause"] ?? "50") ?? 50)
        handler.sendSlowly(context, body: body, from: 0, chunk: chunk, pause: pause)
    }

    /// `/delay/<ms>/<rest>`: the answer to `/<rest>` (rules 1 and 3) after `ms` milliseconds.
    private func delay() {
        let milliseconds = Int64(parts.count > 1 ? parts[1] : "0") ?? 0
        let rest = "/" + parts.dropFirst(2).joined(separator: "/")
        let resource = origin.resource(Substring(rest))
        handler.after(context, .milliseconds(milliseconds)) { [origin] handler, context in
            if let resource {
                handler.send(context, status: resource.status, headers: resource.headers.map { ($0.key, $0.value) }, body: resource.body)
            } else {
                handler.plain(context, origin, Substring(rest))
            }
        }
    }

    /// The start of a satisfiable `Range: bytes=N-` request validated by `If-Range: "v1"`, else nil.
    private func resumeOffset() -> Int? {
        guard let range = headers["range"], range.hasPrefix("bytes="), headers["if-range"] == "\"v1\"",
            let start = Int(range.dropFirst(6).prefix { $0.isNumber }), start < image.count
        else { return nil }
        return start
    }
}
