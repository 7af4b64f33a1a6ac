import Crypto
import Foundation
import Testing

@testable import OspreyServer

/// The client-made URLs committed by `Fixtures/make_fixtures.py` (libthumbor, pyimgproxy).
struct ClientFixtures: Decodable {
    struct Case: Decodable {
        var name: String
        var path: String
        var width: Int
        var height: Int
        var format: String
    }

    var origin_port: Int
    var thumbor_key: String
    var imgproxy_key: String
    var imgproxy_salt: String
    var thumbor: [Case]
    var thumbor_unsafe: String
    var imgproxy: [Case]

    static let shared: ClientFixtures = {
        let url = Bundle.module.url(forResource: "client_urls", withExtension: "json", subdirectory: "Fixtures")!
        return try! JSONDecoder().decode(ClientFixtures.self, from: Data(contentsOf: url))
    }()
}

@Suite("Server signatures", .timeLimit(.minutes(2)))
struct SignatureTests {
    @Test("thumbor: every libthumbor CryptoURL signature is reproduced and accepted")
    func libthumborSignatures() throws {
        let fixtures = ClientFixtures.shared
        let signer = ThumborSigner(key: fixtures.thumbor_key)
        for item in fixtures.thumbor {
            let trimmed = item.path.dropFirst()
            let slash = trimmed.firstIndex(of: "/")!
            let signature = String(trimmed[..<slash]), rest = String(trimmed[trimmed.index(after: slash)...])
            #expect(signature.count == 28, "\(item.name)")
            #expect(signer.signature(of: rest) == signature, "\(item.name)")
            #expect(throws: Never.self) { try ThumborURLParser(signer: signer).parse(path: String(trimmed)) }
        }
    }

    @Test("thumbor: tampered, unsigned and wrong-key URLs are 403")
    func thumborRefusals() throws {
        let fixtures = ClientFixtures.shared
        let parser = ThumborURLParser(signer: ThumborSigner(key: fixtures.thumbor_key))
        let path = String(fixtures.thumbor[0].path.dropFirst())
        let tampered = path.replacingOccurrences(of: "120x80", with: "121x80")
        #expect(throws: ServerError.self) { try parser.parse(path: tampered) }
        do { _ = try parser.parse(path: tampered) } catch { #expect(error.status == 403) }
        do { _ = try parser.parse(path: fixtures.thumbor_unsafe) } catch { #expect(error.status == 403) }
        var allowing = parser
        allowing.allowUnsafe = true
        #expect(throws: Never.self) { try allowing.parse(path: fixtures.thumbor_unsafe) }
        do { _ = try ThumborURLParser(signer: ThumborSigner(key: "other")).parse(path: path) } catch { #expect(error.status == 403) }
    }

    @Test("imgproxy: the published test vector")
    func imgproxyVector() throws {
        let pair = try #require(
            ImgproxySigner.KeyPair(
                hexKey: Data("secret".utf8).map { String(format: "%02x", $0) }.joined(),
                hexSalt: Data("hello".utf8).map { String(format: "%02x", $0) }.joined()))
        let signer = ImgproxySigner(pairs: [pair])
        let path = "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"
        #expect(signer.signature(of: path, pair: pair) == "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8")
        let job = try ImgproxyURLParser(signer: signer).parse(path: "/oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8" + path)
        #expect(job.source.absoluteString == "http://example.com/images/curiosity.jpg")
        #expect(job.format == .png)
        #expect(job.processors.map(\.identifier) == ["geometry:300x400:fill:noup:smart"])
        do { _ = try ImgproxyURLParser(signer: signer).parse(path: "/oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH9" + path) } catch {
            #expect(error.status == 403)
        }
    }

    @Test("imgproxy: every pyimgproxy signature is accepted, with key rotation and truncation")
    func pyimgproxySignatures() throws {
        let fixtures = ClientFixtures.shared
        let pair = try #require(ImgproxySigner.KeyPair(hexKey: fixtures.imgproxy_key, hexSalt: fixtures.imgproxy_salt))
        let other = try #require(ImgproxySigner.KeyPair(hexKey: "abcd", hexSalt: "ef01"))
        let parser = ImgproxyURLParser(signer: ImgproxySigner(pairs: [other, pair]))
        for item in fixtures.imgproxy {
            #expect(throws: Never.self, "\(item.name)") { try parser.parse(path: item.path) }
        }
        let truncated = ImgproxySigner(pairs: [pair], signatureBytes: 8)
        let path = "/rs:fit:10:10/plain/http://example.com/a.jpg"
        let signature = truncated.signature(of: path, pair: pair)
        #expect(signature.count == 11)
        #expect(throws: Never.self) { try ImgproxyURLParser(signer: truncated).parse(path: "/" + signature + path) }
    }

    @Test("imagor's SHA-256 thumbor signatures when enabled")
    func imagorSignatures() throws {
        let signer = ThumborSigner(key: "mysecret", sha256Length: 40)
        let path = "300x200/http://example.com/a.jpg"
        // The full HMAC-SHA256, truncated to 40 characters, as imagor does.
        let full = Base64URL.encode(Array(HMACFixture.sha256(key: "mysecret", path)), padding: false)
        #expect(signer.isValid(full.prefix(40), for: path))
        #expect(!ThumborSigner(key: "mysecret").isValid(full.prefix(40), for: path))
    }
}

enum HMACFixture {
    static func sha256(key: String, _ text: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: SymmetricKey(data: Data(key.utf8))))
    }
}
