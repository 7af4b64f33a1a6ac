import OspreyServer

/// One input is split into a key, a salt, a path and a claimed signature (separated by NUL bytes;
/// missing parts are empty). Checked invariants, besides not crashing:
/// - each signer accepts its own signature of the path;
/// - a claimed signature that differs from every accepted form is rejected.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSignature(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let parts = bytes.split(separator: 0, maxSplits: 3, omittingEmptySubsequences: false).map(Array.init)
    func part(_ index: Int) -> [UInt8] { index < parts.count ? parts[index] : [] }
    let key = String(decoding: part(0), as: UTF8.self)
    let salt = part(1)
    let path = String(decoding: part(2), as: UTF8.self)
    let claimed = String(decoding: part(3), as: UTF8.self)
    let length = Int(bytes.first ?? 0) % 48

    // thumbor HMAC-SHA1, with imagor's truncated HMAC-SHA256 accepted too.
    let thumbor = ThumborSigner(key: key, sha256Length: length < 8 ? nil : length)
    let own = thumbor.signature(of: path)
    precondition(thumbor.isValid(own, for: path), "thumbor signer rejects its own signature")
    if thumbor.isValid(claimed, for: path) {
        precondition(claimed == own || claimed.utf8.count == thumbor.sha256Length, "thumbor accepted a foreign signature")
    }

    // imgproxy HMAC-SHA256 over salt ‖ path, truncated to 1...32 bytes; key rotation with two pairs.
    let pairs = [
        ImgproxySigner.KeyPair(key: part(0).isEmpty ? [1] : part(0), salt: salt),
        ImgproxySigner.KeyPair(key: [0x6b], salt: [])
    ]
    let imgproxy = ImgproxySigner(pairs: pairs, signatureBytes: length)
    let accepted = pairs.map { imgproxy.signature(of: path, pair: $0) }
    for signature in accepted {
        precondition(imgproxy.isValid(signature, for: path), "imgproxy signer rejects its own signature")
    }
    if imgproxy.isValid(claimed, for: path) {
        precondition(accepted.contains(claimed), "imgproxy accepted a foreign signature")
    }
    // Hex key parsing (the CLI's --imgproxy-key/--imgproxy-salt): must not crash on any text.
    _ = ImgproxySigner.KeyPair(hexKey: key, hexSalt: String(decoding: salt, as: UTF8.self))
    return 0
}
