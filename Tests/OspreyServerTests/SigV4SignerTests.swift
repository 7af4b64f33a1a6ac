import Crypto
import Foundation
import OspreyTestSupport
import Testing

@testable import OspreyServer

@Suite("SigV4 signing: AWS's published vectors and botocore's signer", .timeLimit(.minutes(15)))
struct SigV4SignerTests {
    struct Suite: Decodable {
        struct Vector: Decodable {
            var name: String
            var method: String
            var url: String
            var canonicalRequestSHA256: String
            var stringToSign: String?
            var authorization: String
        }
        var accessKeyID: String
        var secretAccessKey: String
        var region: String
        var service: String
        var date: String
        var vectors: [Vector]
    }

    static func date(_ text: String) -> Date {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter.date(from: text)!
    }

    @Test("AWS's SigV4 test-suite vectors: canonical request, string to sign and Authorization")
    func awsVectors() throws {
        let url = try #require(Bundle.module.url(forResource: "Fixtures/sigv4/aws-test-suite", withExtension: "json"))
        let suite = try JSONDecoder().decode(Suite.self, from: Data(contentsOf: url))
        #expect(suite.vectors.count == 4)
        let signer = SigV4Signer(
            credentials: .init(accessKeyID: suite.accessKeyID, secretAccessKey: suite.secretAccessKey), region: suite.region,
            service: suite.service)
        for vector in suite.vectors {
            let target = try #require(URL(string: vector.url))
            let signed = signer.sign(
                method: vector.method, url: target, headers: [(name: "Host", value: target.host!)], payloadHash: SigV4Signer.emptyPayloadHash,
                date: Self.date(suite.date))
            #expect(SigV4Signer.hex(SHA256.hash(data: Data(signed.canonicalRequest.utf8))) == vector.canonicalRequestSHA256, "\(vector.name)")
            if let sts = vector.stringToSign { #expect(signed.stringToSign == sts, "\(vector.name)") }
            #expect(signed.headers.first { $0.name == "Authorization" }?.value == vector.authorization, "\(vector.name)")
            #expect(signed.headers.first { $0.name == "X-Amz-Date" }?.value == suite.date)
        }
    }

    @Test("The URI encoding SigV4 requires: unreserved bytes kept, the rest upper-case %XX, slashes by choice")
    func uriEncoding() {
        #expect(SigV4Signer.uriEncode("a b/c~d_e.f-g", encodingSlash: false) == "a%20b/c~d_e.f-g")
        #expect(SigV4Signer.uriEncode("a/b+c=é", encodingSlash: true) == "a%2Fb%2Bc%3D%C3%A9")
        #expect(SigV4Signer.canonicalQuery("b=2&a=x%2Fy&a=1&c") == "a=1&a=x%2Fy&b=2&c=")
    }

    struct BotocoreRequest: Codable {
        var method: String
        var url: String
        var headers: [String: String]
        var body: String
        var accessKeyID: String
        var secretAccessKey: String
        var sessionToken: String?
        var region: String
    }

    struct BotocoreSigned: Decodable {
        var authorization: String
        var contentSHA256: String
    }

    @Test("Signs S3 requests as botocore's S3SigV4Auth does (GET, HEAD, PUT, DELETE; tokens, ports, queries, odd keys)")
    func botocore() async throws {
        let venv = try await S3TestEnvironment.venv()
        let requests = [
            BotocoreRequest(
                method: "GET", url: "http://127.0.0.1:9000/bucket/photos/a%20b%2Bc.jpg", headers: ["If-None-Match": "\"abc\""], body: "",
                accessKeyID: "AKID1", secretAccessKey: "secret/1+x", sessionToken: nil, region: "us-east-1"),
            BotocoreRequest(
                method: "PUT", url: "http://bucket.s3.eu-west-1.amazonaws.com/results/k%C3%A9y.webp",
                headers: ["Content-Type": "image/webp", "Content-Length": "5"], body: "hello", accessKeyID: "AKID2",
                secretAccessKey: "s2", sessionToken: "token/with+chars==", region: "eu-west-1"),
            BotocoreRequest(
                method: "HEAD", url: "https://s3.amazonaws.com/bucket/%E1%88%B4", headers: [:], body: "", accessKeyID: "AKID3",
                secretAccessKey: "s3", sessionToken: nil, region: "us-east-1"),
            BotocoreRequest(
                method: "DELETE", url: "http://localhost:4566/b/x/y?versionId=3&acl=", headers: ["X-Amz-Meta-Note": "a   b  c"],
                body: "", accessKeyID: "AKID4", secretAccessKey: "s4", sessionToken: nil, region: "ap-south-1")
        ]
        let date = "20261205T043000Z"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-sigv4-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("requests.json")
        struct Spec: Encodable {
            var date: String
            var requests: [BotocoreRequest]
        }
        try JSONEncoder().encode(Spec(date: date, requests: requests)).write(to: input)
        let run = try await ProcessRun.run(
            venv.appendingPathComponent("bin/python"),
            [S3TestEnvironment.repository.appendingPathComponent("Tests/S3/botocore_sign.py").path, input.path])
        try #require(run.status == 0, "\(run.errors)")
        let expected = try JSONDecoder().decode([BotocoreSigned].self, from: run.stdout)
        try #require(expected.count == requests.count)
        for (request, botocore) in zip(requests, expected) {
            let url = try #require(URL(string: request.url))
            let host = url.port.map { "\(url.host!):\($0)" } ?? url.host!
            var headers = request.headers.map { (name: $0.key, value: $0.value) }
            headers.append((name: "Host", value: host))
            headers.append((name: "X-Amz-Content-SHA256", value: botocore.contentSHA256))
            let signer = SigV4Signer(
                credentials: .init(accessKeyID: request.accessKeyID, secretAccessKey: request.secretAccessKey, sessionToken: request.sessionToken),
                region: request.region, service: "s3")
            let signed = signer.sign(method: request.method, url: url, headers: headers, payloadHash: botocore.contentSHA256, date: Self.date(date))
            #expect(signed.headers.first { $0.name == "Authorization" }?.value == botocore.authorization, "\(request.method) \(request.url)")
        }
    }
}
