import Crypto
import Foundation

/// imgproxy's URL signature: HMAC-SHA256 with the key over salt ‖ path, where path is everything
/// after the signature segment including its leading slash (`/rs:fill:300:400:0/…/plain/…`, as
/// received: percent-encoding kept, query removed), in URL-safe base64 without padding, optionally
/// truncated to ``signatureBytes`` bytes before encoding. Several key/salt pairs may be configured
/// (key rotation); any of them verifies. Compared in constant time.
public struct ImgproxySigner: Sendable {
    /// One key and its salt, as bytes (given in hex on the command line).
    public struct KeyPair: Sendable, Hashable {
        /// The HMAC key.
        public var key: [UInt8]
        /// The salt prepended to the signed path.
        public var salt: [UInt8]

        /// A pair of raw bytes.
        public init(key: [UInt8], salt: [UInt8]) {
            self.key = key
            self.salt = salt
        }

        /// A pair from hex text (imgproxy's `IMGPROXY_KEY` / `IMGPROXY_SALT`); `nil` when either is not hex.
        public init?(hexKey: String, hexSalt: String) {
            guard let key = Self.bytes(hex: hexKey), let salt = Self.bytes(hex: hexSalt), !key.isEmpty else { return nil }
            self.init(key: key, salt: salt)
        }

        static func bytes(hex: String) -> [UInt8]? {
            let characters = Array(hex.utf8)
            guard characters.count % 2 == 0 else { return nil }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(characters.count / 2)
            for index in stride(from: 0, to: characters.count, by: 2) {
                guard let byte = UInt8(String(decoding: characters[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
                bytes.append(byte)
            }
            return bytes
        }
    }

    /// The accepted pairs.
    public var pairs: [KeyPair]
    /// Bytes of the digest kept (1...32). Default 32: untruncated.
    public var signatureBytes: Int

    /// A signer accepting `pairs`, truncating to `signatureBytes` (default 32).
    public init(pairs: [KeyPair], signatureBytes: Int = 32) {
        self.pairs = pairs
        self.signatureBytes = min(max(signatureBytes, 1), 32)
    }

    /// The signature of `path` with `pair`.
    public func signature(of path: String, pair: KeyPair) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: pair.salt + Array(path.utf8), using: SymmetricKey(data: pair.key))
        return Base64URL.encode(Array(mac).prefix(signatureBytes), padding: false)
    }

    /// Whether `signature` signs `path` with any pair.
    public func isValid(_ signature: some StringProtocol, for path: String) -> Bool {
        let given = Array(signature.utf8)
        var valid = false
        for pair in pairs where constantTimeEqual(given, Array(self.signature(of: path, pair: pair).utf8)) { valid = true }
        return valid
    }
}
