import Foundation
import Osprey

extension ImageService {
    /// The answer to an `/info` URL (``ImageInfo``'s JSON): from the result cache when it has it
    /// (keyed like results, a file's version included), else from the source's header and one
    /// small decode, under the worker limit like a miss, then cached as long as a result of the
    /// same source would be.
    func info(for prepared: PreparedJob) async throws(ServerError) -> Data {
        let job = prepared.job
        let key = prepared.identity + "|info" + (LocalSource.isFile(job.source) ? "|v:" + local.version(of: job.source) : "")
        if let (entry, level) = await results.lookup(key) {
            metrics.cache(level)
            return entry.data
        }
        try await checkRemote(job.source)
        return try await limiter.run { [self] () async throws(ServerError) in
            let source = try await source(of: job.source)
            guard let header = source.header else {
                throw .unprocessable("source \(job.source.absoluteString) is not an image the server reads")
            }
            let maxSourcePixels = configuration.maxSourcePixels
            let etag = source.data.validator?.etag
            let data = try await pipeline.configuration.processingQueue.run { () throws(ServerError) -> Data in
                do throws(OspreyError) {
                    return try ImageInfo(data: source.data.data, header: header, etag: etag, maxSourcePixels: maxSourcePixels).encoded()
                } catch {
                    throw ServerError(error)
                }
            }
            metrics.cache(source.downloaded ? "miss" : "original")
            let fresh = source.validatedAt + sources.freshness(of: job.source) - ContinuousClock.now
            let lifetime = Double(fresh.components.seconds)
            // Kept as an entry of the result cache (its format field unused: the answer is JSON).
            if lifetime > 0 { await results.store(ResultCache.Entry(data: data, format: .png), forKey: key, lifetime: lifetime) }
            return data
        }
    }
}
