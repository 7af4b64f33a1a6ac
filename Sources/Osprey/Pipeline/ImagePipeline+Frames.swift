import Foundation

/// Animations delivered as their first frame and a frame decoder
/// (``RequestOption/animationFramesOnDemand(_:)``), so that a player holds the frames it buffers, not
/// every frame's pixels.
extension ImagePipeline {
    /// Whether `options` ask for frames on demand and ask for nothing the frames would have to go
    /// through: no processor but downsamples (frames stay full size), no image modifier, no
    /// thumbnail, scale-down limit or first-frame-only decode.
    static func decodesFramesOnDemand(_ options: ResolvedOptions) -> Bool {
        guard options.animationFramesOnDemand, options.imageModifier == nil else { return false }
        let decoding = options.decodingOptions
        guard !decoding.firstFrameOnly, decoding.thumbnail == nil, decoding.scaleDownLimitBytes == nil else { return false }
        return stages(of: options.processor).allSatisfy { $0 is ImageProcessors.Downsample }
    }

    /// The deliver stage for the bytes of an animated format: reads the header and decodes the
    /// first frame on the processing queue, and finishes `job` with that frame and the decoder.
    /// Nothing is stored under the request's key (the frame is not the image of the request);
    /// the bytes go to the original cache's disk, unless they came from a cache or the fetch wrote
    /// them already. A still GIF or WebP is decoded and processed as usual; bytes that do not
    /// read fail the request with the decoder's error.
    func deliverFramesOnDemand(_ data: Data, fetched: FetchedSource, for job: DeliverJob, _ context: StageContext) {
        let logger = configuration.logger, key = context.key
        ProcessingThread.run(on: processingPlace(context)) {
            let decoder: AnimationFrameDecoder
            let first: Image
            do throws(OspreyError) {
                decoder = try AnimationFrameDecoder(data: data, options: context.options.decodingOptions)
                guard decoder.frameCount > 1 else { return self.processWhole(fetched, for: job, context) }
                first = try decoder.frame(at: 0)
            } catch {
                return job.finish(.failure(error))
            }
            logger.debug(
                "decode first frame",
                metadata: [
                    "osprey.key": "\(key)", "osprey.bytes": "\(data.count)", "osprey.frames": "\(decoder.frameCount)",
                    "osprey.size": "\(first.width)x\(first.height)"
                ])
            let options = context.options
            if fetched.cacheType == .none, options.storage.toDisk, !context.fetchKey.key.storesOriginal {
                context.originalCache.storeToDisk(data, forKey: key, validator: fetched.validator) { _ in }
            }
            let decoded = DecodeInfo(width: first.width, height: first.height, shrunkOnLoad: false)
            job.finish(.success(DeliveredImage(image: first, data: data, cacheType: fetched.cacheType, decoded: decoded, frames: decoder)))
        }
    }
}
