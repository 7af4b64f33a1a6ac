import Foundation
import Osprey

/// One input: bytes handed to ``ImageDecoder`` as a download's would be, at full size and into a
/// 64-pixel thumbnail box, with a 4-megapixel bomb limit. A thrown ``OspreyError`` is a correct
/// answer. Checked invariant, besides not crashing: a decoded image has a size within the limit.
/// The seeds (`Fuzz/Corpus/decoder`) are JPEG XL, SVG and PDF files, good and hostile.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImageDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    for thumbnail in [nil, DecodingOptions.Thumbnail(maxPixelSize: 64)] {
        let options = DecodingOptions(thumbnail: thumbnail, maxSourcePixels: 4_000_000)
        guard let image = try? ImageDecoder(options: options).decode(bytes) else { continue }
        precondition(image.width > 0 && image.height > 0 && image.width * image.height <= 4_000_000, "\(image.width)x\(image.height)")
    }
    return 0
}
