import Foundation
import Testing

@testable import Osprey

@Suite("URL schemes the downloader accepts", .timeLimit(.minutes(5)))
struct URLSchemeTests {
    @Test(
        "http(s) needs a host; file and data need none; other schemes are refused",
        arguments: [
            ("https://images.example.com/a.png", true),
            ("HTTP://Images.Example.com:8080/a.png", true),
            ("http://user:secret@host/a.png", true),
            ("http://[::1]:8080/a.png", true),
            ("http://host?query", true),
            ("http:///a.png", false),
            ("http://:80/a.png", false),
            ("http://user@/a.png", false),
            ("https:a.png", false),
            ("file:///tmp/a.png", true),
            ("data:image/png;base64,AAAA", true),
            ("ftp://host/a.png", false),
            ("httpx://host/a.png", false)
        ])
    func supported(_ string: String, _ expected: Bool) throws {
        let url = try #require(URL(string: string))
        #expect(ImageDownloader.isSupported(url) == expected)
    }

    @Test("schemes compare ASCII case-insensitively")
    func caseInsensitive() throws {
        #expect(URLScheme.parse(try #require(URL(string: "FiLe:///x"))).scheme == .file)
        #expect(URLScheme.parse(try #require(URL(string: "DATA:,x"))).scheme == .data)
        #expect(URLScheme.parse(try #require(URL(string: "HttpS://h/x"))).scheme == .https)
    }
}
