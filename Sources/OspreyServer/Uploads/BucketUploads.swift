import Foundation
import Osprey

/// Uploads kept in a bucket (`--upload-dir s3://BUCKET[/PREFIX]`), one object per id, so that a
/// cluster shares them without a shared volume.
///
/// An S3 `PUT` is atomic: readers see the whole old object, the whole new one, or none, never a
/// torn one, and an instance killed while uploading leaves nothing (the store discards an
/// incomplete body). As sources, uploads are read through the pipeline like `s3://` sources
/// (cached, revalidated by `ETag` after the origin TTL), so a replaced or deleted upload's
/// variants can be served until then, by every instance (with a directory, each request checks
/// the file's version).
struct BucketUploads: Sendable {
    let client: S3Client
    let path: S3Path

    /// The object of upload `id`.
    func location(_ id: String) throws(ServerError) -> S3Location {
        try path.location(id)
    }

    /// The source URL of upload `id` (the internal URL of its object).
    func source(_ id: String) throws(ServerError) -> URL {
        try location(id).url
    }

    /// Stores `data` as upload `id` (a new one, or replacing it).
    func write(_ data: Data, id: String) async throws(ServerError) {
        let location = try location(id)
        do throws(S3Error) {
            try await client.put(location, data: data, contentType: ImageFormat(sniffing: data)?.mimeType)
        } catch {
            throw Self.failure(error)
        }
    }

    /// Removes upload `id`; `false` when there was none.
    func remove(_ id: String) async throws(ServerError) -> Bool {
        let location = try location(id)
        do throws(S3Error) {
            guard try await client.head(location) != nil else { return false }
            try await client.delete(location)
            return true
        } catch {
            throw Self.failure(error)
        }
    }

    /// Upload `id`'s bytes and metadata, `nil` when there is none.
    func read(_ id: String, maxBytes: Int) async throws(ServerError) -> S3Client.Object? {
        let location = try location(id)
        do throws(S3Error) {
            switch try await client.get(location, maxBytes: maxBytes) {
            case .object(let object): return object
            case .notFound, .notModified: return nil
            }
        } catch {
            throw Self.failure(error)
        }
    }

    private static func failure(_ error: S3Error) -> ServerError {
        ServerError(status: 502, reason: "upload storage: \(error.description)")
    }
}
