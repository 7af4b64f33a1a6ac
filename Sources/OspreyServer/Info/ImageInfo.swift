import Foundation
import Osprey

/// The answer to `/info`: what a source is, from its header and one small shrink-on-load decode
/// of its first frame (at most 100 pixels a side, never the full size):
///
/// ```json
/// {"format":"jpeg","width":4000,"height":3000,"upright_width":3000,"upright_height":4000,
///  "orientation":6,"frames":1,"has_alpha":false,"bytes":1843200,"etag":"\"…\"",
///  "average_color":"#7a6b5c","thumbhash":"…","blurhash":"…"}
/// ```
///
/// `width`/`height` are as stored, `upright_*` after the EXIF orientation; `etag` is the source's
/// (the origin's `ETag`, a file's version; `null` when there is none); `average_color` is the
/// first frame's average (ThumbHash's DC term); `thumbhash` is base64 and `blurhash` has 4 x 3
/// components, both from the library (``ThumbHash``, ``BlurHash``).
struct ImageInfo: Sendable, Encodable, Equatable {
    var format: String
    var width: Int
    var height: Int
    var uprightWidth: Int
    var uprightHeight: Int
    var orientation: Int
    var frames: Int
    var hasAlpha: Bool
    var bytes: Int
    var etag: String?
    var averageColor: String
    var thumbhash: String
    var blurhash: String

    enum CodingKeys: String, CodingKey {
        case format, width, height
        case uprightWidth = "upright_width"
        case uprightHeight = "upright_height"
        case orientation, frames
        case hasAlpha = "has_alpha"
        case bytes, etag
        case averageColor = "average_color"
        case thumbhash, blurhash
    }

    /// The info of `data` (whose `header` was read), with the source's `etag`; decodes the first
    /// frame at most 100 pixels a side under `maxSourcePixels`. Runs on the calling thread.
    init(data: Data, header: ImageHeader, etag: String?, maxSourcePixels: Int) throws(OspreyError) {
        let small = try ImageDecoder(
            options: DecodingOptions(
                thumbnail: .init(maxPixelSize: ThumbHash.maxInputSide), firstFrameOnly: true, maxSourcePixels: maxSourcePixels)
        ).decode(data)
        let thumbHash = try ThumbHash(image: small)
        let color = thumbHash.averageColor
        format = header.format.rawValue
        width = header.width
        height = header.height
        let swaps = header.orientation.swapsDimensions
        uprightWidth = swaps ? header.height : header.width
        uprightHeight = swaps ? header.width : header.height
        orientation = header.orientation.rawValue
        frames = header.frameCount
        hasAlpha = header.hasAlpha
        bytes = data.count
        self.etag = etag
        averageColor = String(format: "#%02x%02x%02x", Int(color.red), Int(color.green), Int(color.blue))
        thumbhash = thumbHash.string
        blurhash = try BlurHash(image: small).string
    }

    /// The JSON (keys sorted).
    func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data("{}".utf8)
    }
}
