import Crypto
import Foundation

/// thumbor's URL signature, exactly as libthumbor's `CryptoURL` makes it: HMAC-SHA1 with the
/// security key over the path after the signature segment (no leading slash), in URL-safe base64
/// **with** padding (28 characters). imagor's variant (HMAC-SHA256, optionally truncated to a
/// number of characters) is accepted too when ``sha256Length`` is set.
public struct ThumborSigner: Sendable {
    private let keyBytes: [UInt8]
    private var key: SymmetricKey { SymmetricKey(data: keyBytes) }
    /// The length, in characters, of imagor's HMAC-SHA256 signatures (URL-safe base64 without
    /// padding, truncated to this length; 43 is untruncated) accepted besides thumbor's SHA-1
    /// ones. Default `nil`: only SHA-1.
    public var sha256Length: Int?

    /// A signer with the security key `key` (thumbor's `SECURITY_KEY`), accepting imagor's SHA-256
    /// signatures of `sha256Length` characters when given (default `nil`: none).
    public init(key: String, sha256Length: Int? = nil) {
        keyBytes = Array(key.utf8)
        self.sha256Length = sha256Length.map { min(max($0, 8), 43) }
    }

    /// The libthumbor signature of `path` (the URL path after `/SIGNATURE/`).
    public func signature(of path: String) -> String {
        Base64URL.encode(HMAC<Insecure.SHA1>.authenticationCode(for: Data(path.utf8), using: key), padding: true)
    }

    /// Whether `signature` signs `path`, compared in constant time.
    public func isValid(_ signature: some StringProtocol, for path: String) -> Bool {
        let given = Array(signature.utf8)
        if constantTimeEqual(given, Array(self.signature(of: path).utf8)) { return true }
        guard let sha256Length, given.count == sha256Length else { return false }
        let sha256 = Base64URL.encode(HMAC<SHA256>.authenticationCode(for: Data(path.utf8), using: key), padding: false)
        let expected = Array(sha256.utf8.prefix(sha256Length))
        return constantTimeEqual(given, expected)
    }
}
