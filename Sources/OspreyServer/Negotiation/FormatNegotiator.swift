import Osprey

/// Chooses the output format when the URL names none, from the request's `Accept` header.
///
/// The modern formats the client accepts (AVIF, WebP, with `q` > 0, explicitly or through
/// `image/*` / `*/*`) are ranked by their `q` (ties: AVIF before WebP) into an ``Offer``, which is
/// part of the result's cache key; the format is then picked for the processed image: the first
/// offered format that keeps what the image has (animation: WebP, else GIF; AVIF is used for
/// stills only), else PNG for images with alpha and JPEG for the rest.
struct FormatNegotiator: Sendable {
    /// The ranked modern formats a client accepts; `[]` for JPEG/PNG/GIF only.
    struct Offer: Sendable, Hashable {
        var formats: [ImageFormat]
        /// Stable text for cache keys, e.g. `avif>webp`.
        var key: String { formats.isEmpty ? "legacy" : formats.map(\.rawValue).joined(separator: ">") }
    }

    /// Whether AVIF may be offered at all. Default: when this libvips can encode it.
    var allowsAVIF = ImageFormat.avif.canEncode

    /// The offer for an `Accept` header (`nil`: no header, the legacy formats).
    func offer(accept: String?) -> Offer {
        guard let accept else { return Offer(formats: []) }
        var explicit: [String: Double] = [:]
        var wildcard: Double?
        for part in accept.split(separator: ",") {
            let fields = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let type = fields.first, !type.isEmpty else { continue }
            var q = 1.0
            for field in fields.dropFirst() where field.hasPrefix("q=") {
                q = Double(field.dropFirst(2)).map { min(max($0, 0), 1) } ?? 0
            }
            if type == "image/*" || type == "*/*" { wildcard = max(wildcard ?? 0, q) } else { explicit[type] = max(explicit[type] ?? 0, q) }
        }
        // A wildcard alone does not offer the modern formats (browsers that do not support them
        // send `image/*`); only explicit entries do, and an explicit q=0 refuses.
        _ = wildcard
        var ranked: [(ImageFormat, Double, Int)] = []
        if allowsAVIF, let q = explicit["image/avif"], q > 0 { ranked.append((.avif, q, 0)) }
        if let q = explicit["image/webp"], q > 0 { ranked.append((.webp, q, 1)) }
        ranked.sort { $0.1 != $1.1 ? $0.1 > $1.1 : $0.2 < $1.2 }
        return Offer(formats: ranked.map(\.0))
    }

    /// The format for `image` under `offer`.
    func format(for image: Image, offer: Offer) -> ImageFormat {
        if image.isAnimated {
            return offer.formats.contains(.webp) ? .webp : (ImageFormat.gif.canEncode ? .gif : .webp)
        }
        if let first = offer.formats.first { return first }
        return image.hasAlpha ? .png : .jpeg
    }
}
