import Foundation

/// The directives of a `Cache-Control` header that Osprey acts on, parsed once for the library
/// (the freshness of an original: ``ImageData``) and the server (what results may be kept).
package struct CacheControl: Sendable, Hashable {
    /// `no-store` or `no-cache`: nothing is to be reused without asking. Default `false`.
    package var noStore = false
    /// `private`. Default `false`.
    package var isPrivate = false
    /// `max-age`, in seconds. Default `nil`.
    package var maxAge: Int?
    /// `s-maxage`, in seconds. Default `nil`.
    package var sharedMaxAge: Int?

    /// Parses a header value: directives separated by commas, names in any case, arguments
    /// optionally quoted; unknown directives and unparsable arguments are ignored.
    package init(_ value: String) {
        for directive in value.lowercased().split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            let argument = parts.count > 1 ? Int(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))) : nil
            switch parts.first ?? "" {
            case "no-store", "no-cache": noStore = true
            case "private": isPrivate = true
            case "max-age": maxAge = argument
            case "s-maxage": sharedMaxAge = argument
            default: break
            }
        }
    }

    /// How long a shared cache may use the response without asking: `0` for ``noStore``, else
    /// ``sharedMaxAge``, else ``maxAge``; `nil` when the header says none of these.
    package var freshness: Int? {
        noStore ? 0 : sharedMaxAge ?? maxAge
    }
}
