import Foundation

/// Turns downloaded bytes into an ``Image`` for an ``ImagePipeline`` (Nuke's `ImageDecoding`).
/// The default is ``ImageDecoder`` (libvips); tests and benchmarks can swap in their own.
/// The pipeline runs a decoder on its processing queue, off the Swift concurrency pool.
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

extension ImageDecoding {
    /// Decodes with `plan` folded in when this is Osprey's own ``ImageDecoder`` (see
    /// ``DecodePlan``); any other decoder decodes as it always does, and nothing is folded.
    func decode(_ data: Data, options: DecodingOptions, plan: DecodePlan?) throws(OspreyError) -> (image: Image, folded: Bool) {
        if plan != nil, self is ImageDecoder {
            return try ImageDecoder(options: options).decode(data, plan: plan)
        }
        return (try decode(data, options: options), false)
    }

    /// Decodes `data` and runs `processor` over it, the first step folded into the decode when it
    /// shrinks the source: the one path of ``ImageDecoder/decode(_:processedBy:)`` and of the
    /// pipeline's unshared work (revalidation).
    func decode(_ data: Data, options: DecodingOptions, processedBy processor: any ImageProcessing) throws(OspreyError) -> Image {
        let processors = ImagePipeline.stages(of: processor)
        let (image, folded) = try decode(data, options: options, plan: DecodePlan(processors: processors, decoding: options))
        return try ImageProcessors.Composition(Array(processors.dropFirst(folded ? 1 : 0))).process(image)
    }
}
