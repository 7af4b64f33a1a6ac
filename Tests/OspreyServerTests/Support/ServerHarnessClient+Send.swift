import AsyncHTTPClient
import Foundation
import NIOCore

extension ServerHarnessClient {
    /// Sends `method` to `path` with `headers` and `body`; the reply as ``get(_:headers:timeout:)``'s.
    func send(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: Data? = nil, timeout: TimeAmount = .seconds(60)
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = .init(rawValue: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await HTTPClient.shared.execute(request, timeout: timeout)
        let data = try await response.body.collect(upTo: 64 << 20)
        var fields: [String: String] = [:]
        for header in response.headers { fields[header.name.lowercased()] = header.value }
        return Reply(status: Int(response.status.code), headers: fields, body: Data(buffer: data))
    }

    /// `path` sent exactly as given (no client normalises it) on its own connection: the status
    /// and the whole answer.
    func raw(_ path: String) async throws -> (status: Int, text: String) {
        let text = try await RawHTTP.exchange(port: port, request: "GET \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
        return (status, text)
    }
}

extension ServerHarness {
    var client: ServerHarnessClient { ServerHarnessClient(port: port) }
}

/// A temporary directory for one test, removed by ``remove()``.
struct TemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> URL { url.appendingPathComponent(name) }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Multipart bodies, written out by hand (the format is the test's subject).
enum MultipartBody {
    static func make(field: String, filename: String, data: Data, boundary: String = "osprey-test-boundary") -> (body: Data, contentType: String) {
        var body = Data()
        body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(field)\"; filename=\"\(filename)\"\r\n".utf8)
        body += Data("Content-Type: application/octet-stream\r\n\r\n".utf8)
        body += data
        body += Data("\r\n--\(boundary)--\r\n".utf8)
        return (body, "multipart/form-data; boundary=\(boundary)")
    }
}
