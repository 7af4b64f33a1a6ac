import Crypto
import Foundation
import Osprey

/// AWS Signature Version 4 for requests signed in headers (`Authorization`), on swift-crypto's
/// SHA-256 and HMAC.
///
/// The canonical request follows the S3 rules: the path is used as sent (already percent-encoded
/// by ``uriEncode(_:encodingSlash:)``, neither normalised nor encoded twice), query parameters are
/// encoded and sorted, header names lowercased and sorted, values trimmed with inner runs of spaces
/// folded to one. Checked against AWS's published test vectors (those that the S3 rules and the
/// generic ones sign alike) and botocore's `S3SigV4Auth` (`SigV4SignerTests`).
struct SigV4Signer: Sendable {
    /// The key pair requests are signed with.
    typealias Credentials = S3Configuration.Credentials

    /// The hex SHA-256 of an empty payload.
    static let emptyPayloadHash = hex(SHA256.hash(data: Data()))

    /// The signing key pair.
    let credentials: Credentials
    /// The region of the credential scope (`us-east-1`).
    let region: String
    /// The service of the credential scope (`s3`).
    let service: String

    /// What signing a request produced: the headers to add, and the intermediate texts (for tests
    /// and for the reason of a `SignatureDoesNotMatch`).
    struct Signature: Sendable {
        /// The headers to add to the request: `Authorization`, `X-Amz-Date` and, with a session
        /// token, `X-Amz-Security-Token` (already part of the signature).
        var headers: [(name: String, value: String)]
        /// The canonical request that was signed.
        var canonicalRequest: String
        /// The string to sign.
        var stringToSign: String
        /// The hex signature.
        var signature: String
        /// The signed header names, `;`-separated.
        var signedHeaders: String
    }

    /// Signs `method` on `url` with `headers` (which must include `Host`; add
    /// `X-Amz-Content-SHA256` for S3) and the hex SHA-256 `payloadHash` of the body, at `date`.
    /// Every header given is signed.
    func sign(method: String, url: URL, headers: [(name: String, value: String)], payloadHash: String, date: Date) -> Signature {
        let amzDate = Self.timestamp(date)
        let day = String(amzDate.prefix(8))
        var all = headers
        all.append((name: "X-Amz-Date", value: amzDate))
        if let token = credentials.sessionToken { all.append((name: "X-Amz-Security-Token", value: token)) }
        // Lowercased names, sorted; values of repeated names joined by commas in the order given.
        var merged: [String: [String]] = [:]
        for (name, value) in all { merged[name.lowercased(), default: []].append(Self.trimmed(value)) }
        let names = merged.keys.sorted()
        let canonicalHeaders = names.map { "\($0):\(merged[$0]!.joined(separator: ","))\n" }.joined()
        let signedHeaders = names.joined(separator: ";")
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let path = components?.percentEncodedPath ?? "/"
        let canonicalRequest = [
            method, path.isEmpty ? "/" : path, Self.canonicalQuery(components?.percentEncodedQuery), canonicalHeaders, signedHeaders, payloadHash
        ].joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, Self.hex(SHA256.hash(data: Data(canonicalRequest.utf8)))].joined(separator: "\n")
        let signature = Self.hex(Self.hmac(signingKey(day: day), stringToSign))
        let authorization =
            "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
        var added = [(name: "Authorization", value: authorization), (name: "X-Amz-Date", value: amzDate)]
        if let token = credentials.sessionToken { added.append((name: "X-Amz-Security-Token", value: token)) }
        return Signature(
            headers: added, canonicalRequest: canonicalRequest, stringToSign: stringToSign, signature: signature, signedHeaders: signedHeaders)
    }

    /// The key of `day` (`yyyyMMdd`): HMAC chain over the date, region, service and `aws4_request`.
    func signingKey(day: String) -> SymmetricKey {
        var key = SymmetricKey(data: Data("AWS4\(credentials.secretAccessKey)".utf8))
        for part in [day, region, service, "aws4_request"] { key = SymmetricKey(data: Data(Self.hmac(key, part))) }
        return key
    }

    private static func hmac(_ key: SymmetricKey, _ text: String) -> HMAC<SHA256>.MAC {
        HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key)
    }

    /// Lower-case hex of `bytes` (a digest or a MAC).
    static func hex(_ bytes: some ContiguousBytes) -> String { bytes.withUnsafeBytes { Hex.lowercase($0) } }

    /// `date` as `yyyyMMdd'T'HHmmss'Z'` in UTC.
    static func timestamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        return "\(String(format: "%04d", c.year ?? 0))\(two(c.month))\(two(c.day))T\(two(c.hour))\(two(c.minute))\(two(c.second))Z"
    }

    /// A header value trimmed, inner runs of spaces folded to one.
    private static func trimmed(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ").trimmingCharacters(in: .whitespaces)
    }

    /// The query's parameters, each name and value decoded then encoded with ``uriEncode(_:encodingSlash:)``,
    /// sorted by name then value.
    static func canonicalQuery(_ query: String?) -> String {
        guard let query, !query.isEmpty else { return "" }
        let pairs = query.split(separator: "&", omittingEmptySubsequences: true).map { item -> (String, String) in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func encoded(_ part: Substring?) -> String {
                let text = part.map(String.init) ?? ""
                return uriEncode(text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? text, encodingSlash: true)
            }
            return (encoded(parts.first), encoded(parts.count > 1 ? parts[1] : nil))
        }
        return pairs.sorted { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// `text` percent-encoded as SigV4 requires: every byte but `A-Z a-z 0-9 - . _ ~` (and `/`
    /// unless `encodingSlash`) as `%XX` in upper-case hex.
    static func uriEncode(_ text: String, encodingSlash: Bool) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(UnicodeScalar(byte))
            case UInt8(ascii: "/") where !encodingSlash:
                out.append("/")
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }
}
