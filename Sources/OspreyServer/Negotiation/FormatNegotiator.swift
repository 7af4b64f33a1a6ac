import Osprey

/// Chooses the output format when the URL names none, from the request's `Accept` header.
///
/// Every format's weight is its `q`: from its own entry (`image/webp;q=0.9`), else from `image/*`,
/// else from `*/*`. JPEG and PNG are one class, the legacy formats, weighted by the higher of the
/// two; which of them is used depends on the image (PNG when it has alpha), as in imgproxy and
/// thumbor, because browsers list `image/png` first for reasons that have nothing to do with
/// photos. AVIF, JPEG XL and WebP count only when the header names them (`image/avif`,
/// `image/jxl`, `image/webp`): a wildcard does not offer them, because browsers that cannot decode
/// them send `image/*` or `*/*` too.
///
/// A modern format is offered when its weight is above zero and at least the legacy class's (a tie
/// goes to the modern format, the smaller file); offered formats are ranked by weight, AVIF, then
/// JPEG XL, then WebP on a tie, into an ``Offer``, which is part of the result's cache key. The format is then
/// picked for the processed image: the first offered format that keeps what the image has
/// (animation: WebP, else GIF; AVIF and JPEG XL are used for stills only), else PNG for images with alpha and
/// JPEG for the rest. No header at all means the legacy formats; nothing is ever refused with 406.
struct FormatNegotiator: Sendable {
    /// The ranked modern formats a client prefers to JPEG/PNG; `[]` for the legacy formats only.
    struct Offer: Sendable, Hashable {
        var formats: [ImageFormat]
        /// Stable text for cache keys, e.g. `avif>webp`.
        var key: String { formats.isEmpty ? "legacy" : formats.map(\.rawValue).joined(separator: ">") }
    }

    /// Whether AVIF may be offered at all. Default: when this libvips can encode it.
    var allowsAVIF = ImageFormat.avif.canEncode
    /// Whether JPEG XL may be offered at all. Default: when this libvips can encode it (its jxl module).
    var allowsJXL = ImageFormat.jxl.canEncode

    /// The offer for an `Accept` header (`nil`: no header, the legacy formats).
    func offer(accept: String?) -> Offer {
        guard let accept else { return Offer(formats: []) }
        let weights = Weights(accept)
        let legacy = max(weights.q("image/jpeg"), weights.q("image/png"))
        var ranked: [(format: ImageFormat, q: Double)] = []
        if allowsAVIF, let q = weights.explicit["image/avif"], q > 0, q >= legacy { ranked.append((.avif, q)) }
        if allowsJXL, let q = weights.explicit["image/jxl"], q > 0, q >= legacy { ranked.append((.jxl, q)) }
        if let q = weights.explicit["image/webp"], q > 0, q >= legacy { ranked.append((.webp, q)) }
        // A stable sort keeps AVIF before JPEG XL before WebP on a tie.
        return Offer(formats: ranked.sorted { $0.q > $1.q }.map(\.format))
    }

    /// The format for `image` under `offer`.
    func format(for image: Image, offer: Offer) -> ImageFormat {
        if image.isAnimated {
            return offer.formats.contains(.webp) ? .webp : (ImageFormat.gif.canEncode ? .gif : .webp)
        }
        if let first = offer.formats.first { return first }
        return image.hasAlpha ? .png : .jpeg
    }

    /// The formats `f:best` tries for `image` under `offer`: the offered ones that keep what the
    /// image has (animation: WebP and GIF only; AVIF for stills), then PNG for images with alpha,
    /// JPEG and PNG for the rest (a flat graphic can be smaller as PNG).
    func candidates(for image: Image, offer: Offer) -> [ImageFormat] {
        if image.isAnimated {
            return (offer.formats.contains(.webp) ? [.webp] : []) + (ImageFormat.gif.canEncode ? [.gif] : [])
        }
        return offer.formats + (image.hasAlpha ? [.png] : [.jpeg, .png])
    }

    /// The `q` of each media range of an `Accept` header.
    private struct Weights {
        var explicit: [String: Double] = [:]
        var image: Double?
        var any: Double?

        init(_ accept: String) {
            for part in accept.split(separator: ",") {
                let fields = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                guard let type = fields.first, !type.isEmpty else { continue }
                var q = 1.0
                for field in fields.dropFirst() where field.hasPrefix("q=") {
                    q = Double(field.dropFirst(2)).map { min(max($0, 0), 1) } ?? 0
                }
                switch type {
                case "image/*": image = max(image ?? 0, q)
                case "*/*": any = max(any ?? 0, q)
                default: explicit[type] = max(explicit[type] ?? 0, q)
                }
            }
        }

        /// The weight of `type`: its own entry, else `image/*`, else `*/*`, else 0.
        func q(_ type: String) -> Double { explicit[type] ?? image ?? any ?? 0 }
    }
}
