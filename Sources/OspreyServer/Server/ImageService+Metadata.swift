import Foundation
import Osprey

extension ImageService {
    /// The answer to a thumbor `meta/` URL: the JSON of what the job does to its source
    /// (``ThumborMetadata``), from the source's header: the source is fetched when it is not
    /// cached yet, never decoded. Runs under the worker limit like a miss.
    func metadata(for prepared: PreparedJob) async throws(ServerError) -> Data {
        let job = prepared.job
        try await checkRemote(job.source)
        return try await limiter.run { [self] () async throws(ServerError) in
            let source = try await source(of: job.source)
            guard let size = source.size else { throw .unprocessable("the size of \(job.source.absoluteString) cannot be read") }
            return ThumborMetadata(
                url: job.source, width: size.width, height: size.height, frames: source.frames ?? 1, processors: job.processors
            ).encoded(callback: job.metadata?.callback)
        }
    }
}
