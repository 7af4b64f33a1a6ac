import Foundation
import Osprey

extension ThumborURLParser {
    /// thumbor's `extract_focal()`: when the image part is itself a thumbor URL with a manual crop
    /// (`host/unsafe/AxB:CxD/…/IMAGE`, or a signed one; the host may carry a scheme), that URL's
    /// image is the source and its crop the focal region, in the source's pixels. Nested URLs are
    /// looked through, up to 10 deep, as thumbor does. `nil` when no crop is found: the image part
    /// is then fetched as it is.
    static func embeddedCrop(in text: String) -> (image: String, focal: (left: Int, top: Int, right: Int, bottom: Int))? {
        var url = text
        if !url.contains("/"), let decoded = url.removingPercentEncoding { url = decoded }
        for _ in 0..<10 {
            // thumbor's `^(https?://)?.*?/`: the scheme and host go.
            var rest = Substring(url)
            for scheme in ["http://", "https://"] where rest.hasPrefix(scheme) { rest = rest.dropFirst(scheme.count) }
            guard let slash = rest.firstIndex(of: "/") else { return nil }
            var segments = Cursor(String(rest[rest.index(after: slash)...]))
            // unsafe/ or a signature (thumbor's hash group: 28 characters or more).
            guard let first = segments.peek, first == "unsafe" || first.count >= 28 else { return nil }
            segments.advance()
            for optional in ["debug", "meta"] where segments.peek == optional { segments.advance() }
            if let trim = segments.peek, trim == "trim" || trim.hasPrefix("trim:") { segments.advance() }
            var crop: (left: Int, top: Int, right: Int, bottom: Int)?
            if let segment = segments.peek, let rect = parseCrop(segment) {
                crop = rect
                segments.advance()
            }
            if let fit = segments.peek, ["fit-in", "adaptive-fit-in", "full-fit-in", "adaptive-full-fit-in"].contains(fit) { segments.advance() }
            if let size = segments.peek, Self.isSize(size) { segments.advance() }
            if let h = segments.peek, ["left", "center", "right"].contains(h) { segments.advance() }
            if let v = segments.peek, ["top", "middle", "bottom"].contains(v) { segments.advance() }
            if segments.peek == "smart" { segments.advance() }
            var image = segments.remainder
            if image.hasPrefix("filters:"), let end = image.range(of: ")/") { image = String(image[end.upperBound...]) }
            guard !image.isEmpty else { return nil }
            if let crop { return (image, crop) }
            url = image
        }
        return nil
    }

    /// Whether `segment` is a thumbor size, `[-]W x [-]H` with numbers, `orig` or nothing per side.
    private static func isSize(_ segment: String) -> Bool {
        let sides = segment.split(separator: "x", maxSplits: 1, omittingEmptySubsequences: false)
        guard sides.count == 2 else { return false }
        return sides.allSatisfy { side in
            let value = side.hasPrefix("-") ? side.dropFirst() : side
            return value.isEmpty || value == "orig" || value.allSatisfy { $0.isASCII && $0.isNumber }
        }
    }
}
