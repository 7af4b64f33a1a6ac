import Foundation
import NIOCore
import NIOPosix

/// The misbehaving origin of the server's soak (`Tests/Soak`): routes by the path's first
/// component over the body named as the path's last component (rule 3's names; `404` without one).
extension LoopbackRoute {
    /// The size of the `huge-` bodies.
    static let huge = 100 * 1024 * 1024

    /// Answers the request when a fault route matches; false when none does.
    ///
    /// - `/img/…/NAME`: the body with `ETag` and `Cache-Control: max-age=3600`.
    /// - `/stall/NAME`: the head and half the body, then nothing for 60 s, then a close.
    /// - `/reset/NAME`: the head and a third of the body, then a TCP reset; `/reset0/NAME`: a reset
    ///   before any byte.
    /// - `/trunc/NAME`: the whole `Content-Length`, half the body, then a close.
    /// - `/cl-big/NAME`, `/cl-small/NAME`: a `Content-Length` 5,000 bytes over the body, or half of
    ///   it with the whole body sent; then a close.
    /// - `/loop/NAME`: `302` to itself.
    /// - `/html-as-image/NAME`: an HTML page labelled as NAME's image type.
    /// - `/huge-cl/NAME`, `/huge-chunked/NAME`: the body followed by zeros up to 100 MiB, with its
    ///   `Content-Length` or chunked.
    /// - `/gzip-bomb/NAME`: the body named `gzip-bomb.gz` with `Content-Encoding: gzip`.
    /// - `/broken/half/NAME`, `/broken/head/NAME`: the body cut at half, or after 64 bytes, as a
    ///   whole answer.
    /// - `/mut/SEED/NAME`: the body damaged by ``Mutation/mutate(_:seed:)``.
    func fault() -> Bool {
        let kind = parts.first ?? ""
        let kinds: Set = [
            "img", "stall", "reset", "reset0", "trunc", "cl-big", "cl-small", "loop", "html-as-image", "huge-cl", "huge-chunked", "gzip-bomb",
            "broken", "mut"
        ]
        guard kinds.contains(kind) else { return false }
        if kind == "reset0" { return reset() }
        if kind == "loop" {
            handler.send(context, status: 302, headers: [("Location", uri)], body: Data())
            return true
        }
        let name = parts.last ?? ""
        guard parts.count > 1, let body = origin.named(kind == "gzip-bomb" ? "gzip-bomb.gz" : name) else {
            handler.notFound(context)
            return true
        }
        let type = [("Content-Type", LoopbackOriginHandler.contentType(Substring(name)))]
        switch kind {
        case "img":
            handler.send(context, status: 200, headers: type + [("ETag", "\"\(body.count)\""), ("Cache-Control", "max-age=3600")], body: body)
        case "stall":
            handler.writeHead(context, status: 200, headers: type + [("Content-Length", "\(body.count)")])
            handler.writeBody(context, body.prefix(body.count / 2), flush: true)
            handler.after(context, .seconds(60)) { handler, context in handler.drop(context) }
        case "reset":
            handler.writeHead(context, status: 200, headers: type + [("Content-Length", "\(body.count)")])
            handler.writeBody(context, body.prefix(body.count / 3), flush: true)
            return reset()
        case "trunc", "cl-big", "cl-small":
            let length = kind == "trunc" ? body.count : kind == "cl-big" ? body.count + 5000 : body.count / 2
            handler.writeHead(context, status: 200, headers: type + [("Content-Length", "\(length)")])
            handler.writeBody(context, kind == "trunc" ? body.prefix(body.count / 2) : body, flush: true)
            handler.drop(context)
        case "html-as-image":
            handler.send(context, status: 200, headers: type, body: Data("<!doctype html><html><body>not an image</body></html>\n".utf8))
        case "huge-cl", "huge-chunked":
            handler.writeHead(context, status: 200, headers: type + (kind == "huge-cl" ? [("Content-Length", "\(Self.huge)")] : []))
            handler.writeBody(context, body, flush: true)
            Self.zeros(handler, context, remaining: Self.huge - body.count)
        case "gzip-bomb":
            handler.send(context, status: 200, headers: type + [("Content-Encoding", "gzip")], body: body)
        case "broken":
            handler.send(
                context, status: 200, headers: type, body: parts.count > 2 && parts[1] == "half" ? body.prefix(body.count / 2) : body.prefix(64))
        default:
            handler.send(context, status: 200, headers: type, body: Mutation.mutate(body, seed: parts.count > 2 ? Int(parts[1]) ?? 0 : 0))
        }
        return true
    }

    /// Resets the connection (`SO_LINGER` 0, then a close).
    private func reset() -> Bool {
        context.flush()
        let channel = context.channel
        guard let provider = channel as? any SocketOptionProvider else {
            channel.close(promise: nil)
            return true
        }
        provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
        return true
    }

    /// Writes `remaining` zero bytes a MiB at a time, each once the one before is written; then ends.
    private static func zeros(_ handler: LoopbackOriginHandler, _ context: ChannelHandlerContext, remaining: Int) {
        guard remaining > 0 else { return handler.end(context) }
        let count = min(1 << 20, remaining)
        let bound = NIOLoopBound((handler, context), eventLoop: context.eventLoop)
        let part = handler.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(repeating: 0, count: count))))
        context.writeAndFlush(part).whenSuccess {
            let (handler, context) = bound.value
            zeros(handler, context, remaining: remaining - count)
        }
    }
}
