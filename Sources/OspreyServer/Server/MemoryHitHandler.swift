import Foundation
import HTTPTypes
import HummingbirdCore
import NIOCore
import NIOHTTPTypes

/// Answers results that are in the memory cache on the connection's event loop, before
/// Hummingbird sees the request; every other request goes on to Hummingbird unchanged.
///
/// Through Hummingbird, a hit hops from the event loop to a task on the concurrency pool and its
/// answer back (a quarter of a hit's CPU) and passes the router, the middlewares and the
/// response writer. Here it is a lookup and three writes. The answer is the one
/// ``ImageMiddleware`` gives (``ResultResponse``), with the headers the middlewares and
/// Hummingbird add (`X-Osprey-Instance`, `Date`, `Server`), and is counted in the same metrics.
///
/// Answers keep the connection's order: a hit is answered here only when every request passed
/// on before it has been answered (Hummingbird reads requests ahead when a client pipelines).
/// Requests with a `Connection` header (`close`, HTTP/1.0 keep-alive) or a body go on to
/// Hummingbird, which handles their connection semantics.
final class MemoryHitHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let service: ImageService
    private let jobs: JobResolver
    private let configuration: ServerConfiguration
    /// Requests passed on whose response has not ended yet.
    private var pending = 0
    /// Whether the request being read is answered here (its end has not arrived yet).
    private var answering: (response: ResultResponse, started: ContinuousClock.Instant)?
    /// The `Date` value of the current second (formatting one costs microseconds).
    private var date: (second: Int, value: String) = (-1, "")

    /// A handler for one connection.
    init(service: ImageService, jobs: JobResolver, configuration: ServerConfiguration) {
        self.service = service
        self.jobs = jobs
        self.configuration = configuration
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            let started = ContinuousClock.now
            if pending == 0, let response = hit(request) {
                answering = (response, started)
                return
            }
            pending += 1
            context.fireChannelRead(data)
        case .body:
            // A request with a body is never answered here (`hit` requires none).
            if answering == nil { context.fireChannelRead(data) }
        case .end:
            guard let (response, started) = answering else { return context.fireChannelRead(data) }
            answering = nil
            send(response, started: started, context: context)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { pending -= 1 }
        context.write(data, promise: promise)
    }

    /// The answer for `request` when it is a bodiless `GET` or `HEAD` of an image URL whose result
    /// is in the memory cache.
    private func hit(_ request: HTTPRequest) -> ResultResponse? {
        guard request.method == .get || request.method == .head, request.headerFields[.connection] == nil,
            request.headerFields[.contentLength] == nil, request.headerFields[.transferEncoding] == nil,
            let target = request.path
        else { return nil }
        let uri = URI(target)
        let path = uri.path
        // The upload API's paths are Hummingbird's (UploadHandler), whatever the thumbor grammar makes of them.
        let uploads = configuration.thumborPrefix + "/image"
        guard !StatusRoutes.paths.contains(path), !configuration.upload || (path != uploads && !path.hasPrefix(uploads + "/")),
            let job = try? jobs.job(path: path, query: uri.query), job.job.metadata == nil, !job.job.info,
            let entry = service.memoryResult(for: job, accept: request.headerFields[.accept])
        else { return nil }
        return ResultResponse(
            entry: entry, negotiated: job.job.format == nil, isHead: request.method == .head,
            ifNoneMatch: request.headerFields[.ifNoneMatch], maxAge: job.job.maxAge ?? configuration.maxAge, disposition: job.job.disposition)
    }

    private func send(_ answer: ResultResponse, started: ContinuousClock.Instant, context: ChannelHandlerContext) {
        var headers = answer.headers
        headers[.ospreyInstance] = configuration.instanceName
        headers[.date] = currentDate()
        headers[.server] = "osprey"
        context.write(wrapOutboundOut(.head(HTTPResponse(status: answer.status, headerFields: headers))), promise: nil)
        if let body = answer.body {
            context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: body))), promise: nil)
            service.metrics.bytesOut.increment(by: Int64(body.count))
        }
        // Writes made here go towards the socket without passing this handler's `write`.
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        service.metrics.eventLoopHits.increment()
        service.metrics.request(status: answer.status.code)
        service.metrics.record("total", ContinuousClock.now - started)
    }

    private func currentDate() -> String {
        let now = Date()
        let second = Int(now.timeIntervalSince1970)
        if second != date.second { date = (second, HTTPDate.format(now)) }
        return date.value
    }
}
