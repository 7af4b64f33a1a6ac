import Foundation

/// The index file ("sidecar") of one disk cache entry: what Linux file timestamps cannot hold.
///
/// Stored at `<cache dir>/.index/<sha256 hex of key>` as UTF-8 text, one field per line, the key
/// last so that it may contain newlines:
///
/// ```
/// osprey-cache-entry 1
/// file 5e884898….jpg
/// size 48213
/// inode 1837261
/// mtime 1763780000123456789     (the data file's modification time, ns)
/// created 1763780000.123
/// access 1763780500.5
/// expires 1764384800.5        (or "never")
/// policy seconds 604800       (never | seconds <s> | days <d> | date <t>: the entry's own expiration, for extension)
/// key https://example.com/a.jpg
/// ```
///
/// Times are seconds since 1970. `inode`, `mtime` and `size` identify the exact data file the index
/// was written for: a data file with another inode, mtime or size (replaced, truncated, or renamed into place
/// by a store that crashed before its index) does not belong to this index and is never served.
struct DiskEntryIndex: Sendable, Equatable {
    var fileName: String
    var size: Int
    var stamp: DiskFileIO.Stamp
    var created: TimeInterval
    var lastAccess: TimeInterval
    /// Absolute expiry in seconds since 1970; `nil` = never.
    var expires: TimeInterval?
    var policy: StorageExpiration
    var key: String

    static let magic = "osprey-cache-entry 1"

    func isExpired(at now: TimeInterval) -> Bool {
        guard let expires else { return false }
        return expires <= now
    }

    func encoded() -> Data {
        var text = Self.magic + "\n"
        text += "file \(fileName)\n"
        text += "size \(size)\n"
        text += "inode \(stamp.inode)\n"
        text += "mtime \(stamp.modifiedNanoseconds)\n"
        text += "created \(created)\n"
        text += "access \(lastAccess)\n"
        text += "expires \(expires.map { "\($0)" } ?? "never")\n"
        text += "policy \(Self.encode(policy))\n"
        text += "key \(key)"
        return Data(text.utf8)
    }

    /// Parses an index file; `nil` when it is not exactly in the format above.
    init?(parsing data: Data) {
        guard let text = String(data: data, encoding: .utf8) else { return nil }
        var fields: [String: String] = [:]
        var rest = Substring(text)
        guard rest.hasPrefix(Self.magic + "\n") else { return nil }
        rest = rest.dropFirst(Self.magic.count + 1)
        while !rest.isEmpty {
            guard let space = rest.firstIndex(of: " ") else { return nil }
            let name = String(rest[..<space])
            if name == "key" {
                fields["key"] = String(rest[rest.index(after: space)...])
                break
            }
            guard let newline = rest.firstIndex(of: "\n") else { return nil }
            fields[name] = String(rest[rest.index(after: space)..<newline])
            rest = rest[rest.index(after: newline)...]
        }
        guard let fileName = fields["file"], !fileName.isEmpty, !fileName.contains("/"),
              let size = fields["size"].flatMap(Int.init), size >= 0,
              let inode = fields["inode"].flatMap(UInt64.init),
              let mtime = fields["mtime"].flatMap(Int64.init),
              let created = fields["created"].flatMap(Double.init),
              let access = fields["access"].flatMap(Double.init),
              let expiresText = fields["expires"],
              let policy = fields["policy"].flatMap(Self.decodePolicy),
              let key = fields["key"]
        else { return nil }
        let expires: TimeInterval?
        if expiresText == "never" { expires = nil } else {
            guard let value = Double(expiresText) else { return nil }
            expires = value
        }
        self.init(fileName: fileName, size: size, stamp: .init(inode: inode, modifiedNanoseconds: mtime), created: created, lastAccess: access,
                  expires: expires, policy: policy, key: key)
    }

    init(fileName: String, size: Int, stamp: DiskFileIO.Stamp, created: TimeInterval, lastAccess: TimeInterval,
         expires: TimeInterval?, policy: StorageExpiration, key: String) {
        self.fileName = fileName
        self.size = size
        self.stamp = stamp
        self.created = created
        self.lastAccess = lastAccess
        self.expires = expires
        self.policy = policy
        self.key = key
    }

    /// Absolute expiry (seconds since 1970) of an entry stored or extended at `now` with `expiration`.
    static func expiry(of expiration: StorageExpiration, from now: TimeInterval) -> TimeInterval? {
        switch expiration {
        case .never: nil
        case .seconds(let s): now + s
        case .days(let d): now + Double(d) * 86_400
        case .date(let date): date.timeIntervalSince1970
        case .expired: -.infinity
        }
    }

    static func encode(_ expiration: StorageExpiration) -> String {
        switch expiration {
        case .never: "never"
        case .seconds(let s): "seconds \(s)"
        case .days(let d): "days \(d)"
        case .date(let date): "date \(date.timeIntervalSince1970)"
        case .expired: "expired"
        }
    }

    static func decodePolicy(_ text: String) -> StorageExpiration? {
        let parts = text.split(separator: " ", maxSplits: 1).map(String.init)
        switch (parts.first, parts.count) {
        case ("never", 1): return .never
        case ("expired", 1): return .expired
        case ("seconds", 2): return Double(parts[1]).map { .seconds($0) }
        case ("days", 2): return Int(parts[1]).map { .days($0) }
        case ("date", 2): return Double(parts[1]).map { .date(Date(timeIntervalSince1970: $0)) }
        default: return nil
        }
    }
}
