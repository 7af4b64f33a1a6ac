import Foundation
import MultipartKit
import NIOCore

/// The image and its file name in an upload request, as thumbor reads them: a
/// `multipart/form-data` body's field `media` (its `filename`), else the whole body (the `Slug`
/// header).
struct UploadBody: Sendable, Equatable {
    /// The image bytes.
    var data: Data
    /// The file name the client gave; `nil` when none.
    var filename: String?

    /// The upload in `body`, sent with `contentType` and `slug`. A multipart body without a
    /// `media` field is taken whole, as thumbor does; a malformed multipart body is a 400.
    init(body: ByteBuffer, contentType: String?, slug: String?) throws(ServerError) {
        if let contentType, let boundary = Self.boundary(of: contentType) {
            if let media = try Self.mediaPart(of: body, boundary: boundary) {
                self = media
                return
            }
        }
        data = Data(body.readableBytesView)
        filename = slug.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The `boundary` parameter of a `multipart/form-data` content type, or `nil`.
    static func boundary(of contentType: String) -> String? {
        let parts = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.first?.lowercased() == "multipart/form-data" else { return nil }
        for parameter in parts.dropFirst() {
            guard let equals = parameter.firstIndex(of: "=") else { continue }
            guard parameter[..<equals].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else { continue }
            let value = parameter[parameter.index(after: equals)...].trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
            return value.isEmpty || value.count > 70 ? nil : value
        }
        return nil
    }

    /// The `media` part of a multipart body (MultipartKit's parser), or `nil` when it has none.
    static func mediaPart(of body: ByteBuffer, boundary: String) throws(ServerError) -> UploadBody? {
        let parser = MultipartParser(boundary: boundary)
        var headers: [String: String] = [:]
        var current = ByteBuffer()
        var media: UploadBody?
        parser.onHeader = { name, value in headers[name.lowercased()] = value }
        parser.onBody = { chunk in current.writeBuffer(&chunk) }
        parser.onPartComplete = {
            let disposition = headers["content-disposition"].map(Self.dispositionParameters) ?? [:]
            if media == nil, disposition["name"] == "media" {
                media = UploadBody(data: Data(current.readableBytesView), filename: disposition["filename"].flatMap { $0.isEmpty ? nil : $0 })
            }
            headers = [:]
            current.clear()
        }
        do {
            try parser.execute(body)
        } catch {
            throw .badRequest("upload: the multipart/form-data body cannot be parsed (\(error))")
        }
        return media
    }

    private init(data: Data, filename: String?) {
        self.data = data
        self.filename = filename
    }

    /// `form-data; name="media"; filename="a.jpg"` → `["name": "media", "filename": "a.jpg"]`.
    static func dispositionParameters(_ value: String) -> [String: String] {
        var parameters: [String: String] = [:]
        for part in value.split(separator: ";").dropFirst() {
            guard let equals = part.firstIndex(of: "=") else { continue }
            let key = part[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            var text = part[part.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = String(text.dropFirst().dropLast()) }
            parameters[key] = text
        }
        return parameters
    }
}
