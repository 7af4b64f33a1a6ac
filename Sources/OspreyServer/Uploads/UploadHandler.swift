import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Osprey

/// thumbor's upload API under the thumbor prefix, with `--upload`:
///
/// - `POST /image`: the image as the body (`Slug` names the file) or as the `multipart/form-data`
///   field `media` → `201 Created`, `Location: /image/<32 hex id>/<file name>`;
/// - `GET`/`HEAD /image/<id>[/<anything>]`: the original bytes (404 when there is none);
/// - `PUT /image/<id>`: replaces it (`204`) with `--upload-put`, else `405`;
/// - `DELETE /image/<id>`: removes it (`204`, `404` when missing) with `--upload-delete`, else `405`;
/// - any other method: `405`.
///
/// An upload is validated before anything is stored: at most ``ServerConfiguration/maxSourceBytes``
/// (`412`, thumbor's status for `UPLOAD_MAX_SIZE`), a format the server decodes (`415` otherwise:
/// a text file, an unknown format), its header under the pixel and frame limits (`412`: a tiny
/// file declaring a huge canvas is refused before any decode), and its first frame decodable by a
/// small shrink-on-load decode (`415` for a damaged file). Replacing or deleting an upload changes
/// its version (``LocalSource/File/version``), which every cached variant's key includes, so the
/// old variants are never served again.
struct UploadHandler: Sendable {
    /// Where uploads are kept: a directory (``UploadStore``) or a bucket (``BucketUploads``).
    enum Storage: Sendable {
        case directory(UploadStore)
        case bucket(BucketUploads)
    }

    let store: Storage
    let configuration: ServerConfiguration
    let service: ImageService
    /// `<thumbor prefix>/image`.
    let base: String

    /// Whether `path` is the upload API's.
    func handles(_ path: String) -> Bool {
        path == base || path.hasPrefix(base + "/")
    }

    /// The answer to an upload API request.
    func respond(to request: Request) async -> Response {
        do throws(ServerError) {
            let path = request.uri.path
            if path == base || path == base + "/" {
                guard request.method == .post else { throw methodNotAllowed(request.method, allowed: "POST") }
                return try await create(request)
            }
            let rest = path.dropFirst(base.count + 1)
            let id = String(rest.prefix { $0 != "/" })
            guard UploadStore.isID(id) else { throw ServerError.notFound("no upload has the id \"\(id.prefix(64))\"") }
            switch request.method {
            case .get, .head: return try await original(id, isHead: request.method == .head)
            case .put:
                guard configuration.uploadPut else { throw ServerError(status: 405, reason: "replacing an upload is not enabled (--upload-put)") }
                let upload = try await validated(request)
                try await write(upload.data, id: id)
                service.logger.info("upload replaced", metadata: ["id": .string(id), "bytes": .stringConvertible(upload.data.count)])
                return Response(status: .noContent)
            case .delete:
                guard configuration.uploadDelete else {
                    throw ServerError(status: 405, reason: "deleting an upload is not enabled (--upload-delete)")
                }
                guard try await remove(id) else { throw ServerError.notFound("no upload has the id \(id)") }
                service.logger.info("upload deleted", metadata: ["id": .string(id)])
                return Response(status: .noContent)
            default:
                throw methodNotAllowed(request.method, allowed: "GET, HEAD, PUT, DELETE")
            }
        } catch {
            return Response(
                status: HTTPResponse.Status(code: error.status), headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: error.reason + "\n")))
        }
    }

    private func create(_ request: Request) async throws(ServerError) -> Response {
        let upload = try await validated(request)
        let id = UploadStore.newID()
        try await write(upload.data, id: id)
        service.logger.info("upload stored", metadata: ["id": .string(id), "bytes": .stringConvertible(upload.data.count)])
        let name = upload.filename ?? "image." + upload.format.fileExtension
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/;?#%")
        let location = base + "/" + id + "/" + (name.addingPercentEncoding(withAllowedCharacters: allowed) ?? "image")
        return Response(status: .created, headers: [.location: location, .contentLength: "0"])
    }

    private func write(_ data: Data, id: String) async throws(ServerError) {
        switch store {
        case .directory(let directory): try directory.write(data, id: id)
        case .bucket(let bucket): try await bucket.write(data, id: id)
        }
    }

    private func remove(_ id: String) async throws(ServerError) -> Bool {
        switch store {
        case .directory(let directory): return try directory.remove(id)
        case .bucket(let bucket): return try await bucket.remove(id)
        }
    }

    private func original(_ id: String, isHead: Bool) async throws(ServerError) -> Response {
        let data: Data
        var headers: HTTPFields = [.cacheControl: "public, max-age=\(configuration.maxAge)"]
        switch store {
        case .directory:
            let file = try service.local.file(for: LocalSource.url(upload: id))
            let read: LocalSource.File
            (data, read) = try service.local.read(file, maxBytes: .max)
            headers[.eTag] = read.etag
            headers[.lastModified] = read.lastModified
        case .bucket(let bucket):
            guard let object = try await bucket.read(id, maxBytes: configuration.maxSourceBytes) else {
                throw ServerError.notFound("no upload has the id \(id)")
            }
            data = object.data
            headers[.eTag] = object.etag
            headers[.lastModified] = object.lastModified
        }
        headers[.contentLength] = String(data.count)
        headers[.contentType] = ImageFormat(sniffing: data)?.mimeType ?? "application/octet-stream"
        return Response(status: .ok, headers: headers, body: isHead ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The request's upload, checked (see the type's documentation).
    private func validated(_ request: Request) async throws(ServerError) -> (data: Data, filename: String?, format: ImageFormat) {
        let limit = configuration.maxSourceBytes
        let buffer: ByteBuffer
        do {
            // Room for a multipart envelope around an image at the limit.
            buffer = try await request.body.collect(upTo: limit + 64 * 1024)
        } catch {
            throw ServerError(status: 412, reason: "upload refused: the body is larger than the limit of \(limit) bytes")
        }
        let upload = try UploadBody(body: buffer, contentType: request.headers[.contentType], slug: request.headers[HTTPField.Name("Slug")!])
        guard upload.data.count <= limit else {
            throw ServerError(status: 412, reason: "upload refused: \(upload.data.count) bytes, more than the limit of \(limit)")
        }
        guard !upload.data.isEmpty else { throw ServerError(status: 415, reason: "upload refused: the body is empty") }
        let format = try await check(upload.data)
        return (upload.data, upload.filename, format)
    }

    /// The format of `data` when it is an image the server may store; 412 or 415 otherwise.
    func check(_ data: Data) async throws(ServerError) -> ImageFormat {
        let configuration = self.configuration
        return try await service.pipeline.configuration.processingQueue.run { () throws(ServerError) -> ImageFormat in
            let header: ImageHeader
            do throws(OspreyError) {
                header = try ImageDecoder(options: DecodingOptions(maxSourcePixels: configuration.maxSourcePixels)).header(of: data)
            } catch {
                if case .decoding(.tooLarge) = error { throw ServerError(status: 412, reason: "upload refused: \(error.description)") }
                throw ServerError(status: 415, reason: "upload refused: not an image the server reads (\(error.description))")
            }
            // Uploads are served back as they are: an SVG or a PDF from the server's origin could run scripts.
            guard !header.format.isVector else {
                throw ServerError(status: 415, reason: "upload refused: \(header.format) is read as a source, never stored as it is")
            }
            guard header.frameCount <= configuration.maxAnimationFrames else {
                throw ServerError(
                    status: 412,
                    reason: "upload refused: \(header.frameCount) frames, more than the limit of \(configuration.maxAnimationFrames)")
            }
            do throws(OspreyError) {
                try DecodingOptions(maxSourcePixels: configuration.maxSourcePixels)
                    .checkSourcePixels(width: header.width, height: header.height, frames: header.frameCount)
            } catch {
                throw ServerError(status: 412, reason: "upload refused: \(error.description)")
            }
            // A real image: its first frame decodes (shrunk on load to 64 pixels, never at full size).
            do throws(OspreyError) {
                _ = try ImageDecoder(
                    options: DecodingOptions(
                        thumbnail: .init(maxPixelSize: 64), firstFrameOnly: true, maxSourcePixels: configuration.maxSourcePixels)
                ).decode(data)
            } catch {
                throw ServerError(status: 415, reason: "upload refused: the image cannot be decoded (\(error.description))")
            }
            return header.format
        }
    }

    private func methodNotAllowed(_ method: HTTPRequest.Method, allowed: String) -> ServerError {
        ServerError(status: 405, reason: "method \(method) is not allowed here; use \(allowed)")
    }
}
