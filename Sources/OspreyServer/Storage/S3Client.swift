import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1

/// Requests to an S3-compatible object store, signed with ``SigV4Signer`` (or anonymous), through
/// its own async-http-client `HTTPClient` (call ``shutdown()`` once unused).
///
/// Addressing follows ``S3Configuration/pathStyle``: `endpoint/bucket/key` or
/// `bucket.endpoint/key`. Bodies read are bounded (``get(_:ifNoneMatch:maxBytes:)`` throws
/// ``S3Error/tooLarge`` past the limit, before reading more); errors carry S3's own code and
/// message (`SignatureDoesNotMatch`, `NoSuchBucket`, …) as their reason.
final class S3Client: Sendable {
    /// Where and how requests go.
    let configuration: S3Configuration
    /// The client requests go through.
    let http: HTTPClient
    private let signer: SigV4Signer?

    /// Whether requests go unsigned (no credentials configured: public buckets only).
    var isAnonymous: Bool { signer == nil }

    /// A client for `configuration`, with its own `HTTPClient` (redirects not followed, no
    /// decompression, ``S3Configuration/hostOverrides`` as its DNS override).
    init(configuration: S3Configuration) {
        self.configuration = configuration
        signer = configuration.credentials.map { SigV4Signer(credentials: $0, region: configuration.region, service: "s3") }
        var client = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5), read: .seconds(30)), decompression: .disabled)
        client.dnsOverride = configuration.hostOverrides
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: client)
    }

    /// Shuts the HTTP client down; later requests fail.
    func shutdown() async {
        try? await http.shutdown()
    }

    /// An object's bytes and metadata.
    struct Object: Sendable {
        /// The body (empty for `HEAD`).
        var data: Data
        /// The `ETag`, quoted as S3 sends it.
        var etag: String?
        /// The `Last-Modified` date as sent.
        var lastModified: String?
        /// The `Content-Type`.
        var contentType: String?
        /// The `Content-Length`.
        var length: Int?
    }

    /// What a `GET` found.
    enum Fetched: Sendable {
        /// The object.
        case object(Object)
        /// It has not changed since the `If-None-Match` ETag (`304`).
        case notModified
        /// No such key (`404 NoSuchKey`).
        case notFound
    }

    /// The URL of `location` for the configured addressing, with `query` (already encoded).
    func url(for location: S3Location, query: String? = nil) -> URL {
        let endpoint = configuration.resolvedEndpoint
        var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false) ?? URLComponents()
        let base = components.percentEncodedPath.hasSuffix("/") ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        let key = SigV4Signer.uriEncode(location.key, encodingSlash: false)
        if configuration.pathStyle {
            components.percentEncodedPath = "\(base)/\(location.bucket)/\(key)"
        } else {
            components.percentEncodedHost = "\(location.bucket).\(components.percentEncodedHost ?? "")"
            components.percentEncodedPath = "\(base)/\(key)"
        }
        components.percentEncodedQuery = query
        return components.url!
    }

    /// A request for `method` on `location` with `headers` and `body`, signed when credentials are
    /// configured (every header given is signed, with `Host`, `X-Amz-Date` and
    /// `X-Amz-Content-SHA256`).
    func request(_ method: String, _ location: S3Location, headers: [(name: String, value: String)] = [], body: Data? = nil) -> HTTPClientRequest {
        let url = url(for: location)
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = HTTPMethod(rawValue: method)
        var all = headers
        let host = url.port.map { "\(url.host ?? ""):\($0)" } ?? (url.host ?? "")
        all.append((name: "Host", value: host))
        if let signer {
            let payload = body.map { SigV4Signer.hex(SHA256.hash(data: $0)) } ?? SigV4Signer.emptyPayloadHash
            all.append((name: "X-Amz-Content-SHA256", value: payload))
            all += signer.sign(method: method, url: url, headers: all, payloadHash: payload, date: Date()).headers
        }
        for (name, value) in all { request.headers.add(name: name, value: value) }
        if let body {
            request.body = .bytes(ByteBuffer(data: body))
        }
        return request
    }

    /// `GET` of `location`, conditional on `ifNoneMatch`; a body over `maxBytes` throws
    /// ``S3Error/tooLarge`` (by `Content-Length`, else once the bytes read pass it).
    func get(_ location: S3Location, ifNoneMatch: String? = nil, maxBytes: Int) async throws(S3Error) -> Fetched {
        let headers = ifNoneMatch.map { [(name: "If-None-Match", value: $0)] } ?? []
        let response = try await execute(request("GET", location, headers: headers), location: location, method: "GET")
        switch response.status.code {
        case 304: return .notModified
        case 404: return .notFound
        case 200:
            let object = Self.object(of: response)
            if let length = object.length, length > maxBytes { throw .tooLarge(location: location, limit: maxBytes) }
            var data = Data()
            do {
                for try await chunk in response.body {
                    guard data.count + chunk.readableBytes <= maxBytes else { throw S3Error.tooLarge(location: location, limit: maxBytes) }
                    data.append(contentsOf: chunk.readableBytesView)
                }
            } catch let error as S3Error {
                throw error
            } catch {
                throw .transport(location: location, message: "\(error)")
            }
            var result = object
            result.data = data
            return .object(result)
        default:
            throw await Self.failure(response, location: location, method: "GET", anonymous: isAnonymous)
        }
    }

    /// `HEAD` of `location`: its metadata, or `nil` when there is no such key.
    func head(_ location: S3Location) async throws(S3Error) -> Object? {
        let response = try await execute(request("HEAD", location), location: location, method: "HEAD")
        switch response.status.code {
        case 200: return Self.object(of: response)
        case 404: return nil
        default: throw await Self.failure(response, location: location, method: "HEAD", anonymous: isAnonymous)
        }
    }

    /// `PUT` of `data` at `location` (S3 makes a `PUT` visible whole or not at all).
    func put(_ location: S3Location, data: Data, contentType: String? = nil) async throws(S3Error) {
        var headers = [(name: "Content-Length", value: "\(data.count)")]
        if let contentType { headers.append((name: "Content-Type", value: contentType)) }
        let response = try await execute(request("PUT", location, headers: headers, body: data), location: location, method: "PUT")
        guard response.status.code == 200 else { throw await Self.failure(response, location: location, method: "PUT", anonymous: isAnonymous) }
        _ = try? await response.body.collect(upTo: 1 << 16)
    }

    /// `DELETE` of `location`; S3 answers `204` whether it existed or not.
    func delete(_ location: S3Location) async throws(S3Error) {
        let response = try await execute(request("DELETE", location), location: location, method: "DELETE")
        guard response.status.code == 204 || response.status.code == 200 else {
            throw await Self.failure(response, location: location, method: "DELETE", anonymous: isAnonymous)
        }
        _ = try? await response.body.collect(upTo: 1 << 16)
    }

    /// Sends `request` within ``S3Configuration/timeout``.
    func execute(_ request: HTTPClientRequest, location: S3Location, method: String, timeout: Duration? = nil) async throws(S3Error)
        -> HTTPClientResponse
    {
        do {
            return try await http.execute(request, timeout: .init(timeout ?? configuration.timeout))
        } catch {
            throw .transport(location: location, message: "\(method) failed: \(error)")
        }
    }

    static func object(of response: HTTPClientResponse) -> Object {
        Object(
            data: Data(), etag: response.headers.first(name: "ETag"), lastModified: response.headers.first(name: "Last-Modified"),
            contentType: response.headers.first(name: "Content-Type"), length: response.headers.first(name: "Content-Length").flatMap { Int($0) })
    }

    /// The error of a response that is not a success: its status, S3's `<Code>` and `<Message>`
    /// (without an error document, the status's reason phrase); a 403 to an `anonymous` request
    /// says that no credentials were found.
    static func failure(_ response: HTTPClientResponse, location: S3Location, method: String, anonymous: Bool = false) async -> S3Error {
        let body = (try? await response.body.collect(upTo: 1 << 16)).map { String(buffer: $0) } ?? ""
        var message = element("Message", in: body)
        if anonymous, response.status.code == 403 {
            message =
                (message.map { $0 + " " } ?? "")
                + "(the request was anonymous: no credentials in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or the shared credentials file)"
        }
        return .refused(
            location: location, method: method, status: Int(response.status.code),
            code: element("Code", in: body) ?? response.status.reasonPhrase, message: message)
    }

    /// The text of the first `<name>` element of an S3 error document.
    static func element(_ name: String, in xml: String) -> String? {
        guard let start = xml.range(of: "<\(name)>"), let end = xml.range(of: "</\(name)>", range: start.upperBound..<xml.endIndex) else {
            return nil
        }
        return String(xml[start.upperBound..<end.lowerBound])
    }
}

/// Why an object-store request failed.
enum S3Error: Error, Sendable, CustomStringConvertible {
    /// The store answered with an error status, S3's error code and message when it sent them.
    case refused(location: S3Location, method: String, status: Int, code: String?, message: String?)
    /// The body passed the limit.
    case tooLarge(location: S3Location, limit: Int)
    /// No answer: connection refused or reset, timeout.
    case transport(location: S3Location, message: String)

    var description: String {
        switch self {
        case .refused(let location, let method, let status, let code, let message):
            return "object store refused \(method) \(location): \(status) \(code ?? "")\(message.map { ": \($0)" } ?? "")"
        case .tooLarge(let location, let limit): return "\(location) is larger than \(limit) bytes"
        case .transport(let location, let message): return "object store unreachable for \(location): \(message)"
        }
    }
}
