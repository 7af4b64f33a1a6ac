import Foundation
import FuzzFileSources

// Debug builds are testable: the size estimate (and through it the resize math) is internal.
@testable import OspreyServer

/// Parsers built once: one ignoring signatures with a preset configured, and one verifying a key
/// pair while serving `_`/`insecure` signatures (so the grammar after the signature is reached).
private let parsers: [ImgproxyURLParser] = [
    ImgproxyURLParser(presets: ["thumb": "rs:fill:100:100/q:70", "loop": "pr:loop"]),
    ImgproxyURLParser(
        signer: ImgproxySigner(
            pairs: [ImgproxySigner.KeyPair(hexKey: "6b6579", hexSalt: "73616c74")!],
            signatureBytes: 16),
        allowUnsigned: true),
    {
        // Presets-only, with a default preset, for chains of preset names.
        var parser = ImgproxyURLParser(presets: ["default": "q:70", "thumb": "rs:fill:100:100", "wide": "rs:fit:200:50/f:best"])
        parser.onlyPresets = true
        return parser
    }()
]

/// One input: a request path after the imgproxy prefix. A thrown ``ServerError`` is a correct
/// answer (a 4xx); a crash or sanitizer report is the finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImgproxyURL(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    for path in [text, "/" + text] {
        for parser in parsers {
            if let job = try? parser.parse(path: path) {
                _ = job.processor.identifier
                _ = job.source.absoluteString
                checkContained(job.source)
                checkObject(job.source)
                // The size-dependent resize math, for a few source shapes.
                for (width, height) in [(1, 1), (400, 300), (16384, 1), (7, 50_000)] {
                    _ = ResultSize.largest(job.processors, width: width, height: height)
                }
            }
        }
    }
    return 0
}
