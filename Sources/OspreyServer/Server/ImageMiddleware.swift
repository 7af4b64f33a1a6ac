import Foundation
import Hummingbird
import Logging
import NIOCore
import Osprey

/// Serves the image URLs of both grammars, each under its prefix; other paths go on to the router
/// (`/health`, `/health/live`, `/health/ready`, `/metrics`). The raw request path is used as received (percent-encoding kept),
/// since that is what signatures cover.
struct ImageMiddleware<Context: ChannelRequestContext>: RouterMiddleware {
    let service: ImageService
    let jobs: JobResolver
    let configuration: ServerConfiguration
    /// thumbor's upload API, with ``ServerConfiguration/upload``.
    var uploads: UploadHandler?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if StatusRoutes.paths.contains(path) { return try await next(request, context) }
        let started = ContinuousClock.now
        service.metrics.inFlight.increment()
        defer { service.metrics.inFlight.decrement() }
        var response: Response
        if let uploads, uploads.handles(path) {
            response = await uploads.respond(to: request)
            service.metrics.request(status: Int(response.status.code))
            return response
        }
        do throws(ServerError) {
            guard request.method == .get || request.method == .head else {
                throw ServerError(status: 405, reason: "method \(request.method) is not allowed; use GET")
            }
            let job = try jobs.job(path: path, query: request.uri.query)
            let accept = request.headers[.accept]
            if job.job.info {
                let service = self.service
                let body = try await Deadline.run(configuration.requestTimeout) { () async throws(ServerError) in
                    try await service.info(for: job)
                }
                var headers = HTTPFields()
                headers[.contentType] = "application/json"
                headers[.cacheControl] = "public, max-age=\(job.job.maxAge ?? configuration.maxAge)"
                response = Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
            } else if let metadata = job.job.metadata {
                let service = self.service
                let body = try await Deadline.run(configuration.requestTimeout) { () async throws(ServerError) in
                    try await service.metadata(for: job)
                }
                var headers = HTTPFields()
                headers[.contentType] = metadata.callback == nil ? "application/json" : "text/javascript"
                headers[.cacheControl] = "public, max-age=\(job.job.maxAge ?? configuration.maxAge)"
                response = Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
            } else if let entry = await service.cachedResult(for: job, accept: accept) {
                response = success(entry, job: job.job, request: request)
            } else {
                let entry = try await produce(job, accept: accept, context: context)
                response = success(entry, job: job.job, request: request)
            }
        } catch {
            response = failure(error, path: path)
        }
        service.metrics.request(status: Int(response.status.code))
        service.metrics.record("total", ContinuousClock.now - started)
        return response
    }

    /// Runs a cache miss under the request deadline, cancelled when the client goes away
    /// (``ConnectionWatcher``: the connection is watched without reading it, so it stays alive
    /// for the client's next request).
    private func produce(_ job: PreparedJob, accept: String?, context: Context) async throws(ServerError) -> ResultCache.Entry {
        let service = self.service, limit = configuration.requestTimeout
        let connection = await ConnectionWatcher.state(of: context.channel)
        return try await ConnectionState.run(cancellingOnClose: connection) { () async throws(ServerError) in
            try await Deadline.run(limit) { () async throws(ServerError) in
                try await service.respond(to: job, accept: accept)
            }
        }
    }

    private func success(_ entry: ResultCache.Entry, job: ImageJob, request: Request) -> Response {
        let answer = ResultResponse(
            entry: entry, negotiated: job.format == nil, isHead: request.method == .head, ifNoneMatch: request.headers[.ifNoneMatch],
            maxAge: job.maxAge ?? configuration.maxAge, disposition: job.disposition)
        guard let body = answer.body else { return Response(status: answer.status, headers: answer.headers) }
        service.metrics.bytesOut.increment(by: Int64(body.count))
        return Response(status: answer.status, headers: answer.headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    private func failure(_ error: ServerError, path: String) -> Response {
        var headers: HTTPFields = [:]
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.cacheControl] =
            error.status >= 500 || error.status == 429 || configuration.errorMaxAge == 0
            ? "no-store" : "public, max-age=\(configuration.errorMaxAge)"
        if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(
            status: HTTPResponse.Status(code: error.status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(string: error.reason + "\n")))
    }
}

/// HTTP dates (RFC 9110 IMF-fixdate).
enum HTTPDate {
    /// One formatter for the process: making one sets up ICU (most of a millisecond, more than the
    /// rest of a cache hit), while formatting with a ready one takes microseconds. DateFormatter is
    /// Sendable (its state is behind a lock), so requests can share it.
    private static let formatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }()

    static func format(_ date: Date) -> String {
        formatter.string(from: date)
    }
}
