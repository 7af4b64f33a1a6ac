import Foundation

/// Turns downloaded bytes into an ``Image`` for an ``ImagePipeline`` (Nuke's `ImageDecoding`).
/// The default is ``ImageDecoder`` (libvips); tests and benchmarks can swap in their own.
public protocol ImageDecoding: Sendable {
    /// Decodes `data` honouring `options`. Errors are ``OspreyError/decoding(_:)``.
    func decode(_ data: Data, options: DecodingOptions) throws(OspreyError) -> Image
}

extension ImageDecoder: ImageDecoding {
    /// Decodes `data` with `options` (this decoder's own ``options`` are replaced for the call).
    public func decode(_ data: Data, options: DecodingOptions) throws(OspreyError) -> Image {
        try ImageDecoder(options: options).decode(data)
    }
}
