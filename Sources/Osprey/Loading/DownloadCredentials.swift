import Foundation

/// A user name and password sent as HTTP basic authentication (`Authorization: Basic …`).
package struct DownloadCredentials: Sendable, Hashable {
    /// The user name.
    package var user: String
    /// The password.
    package var password: String

    /// Creates credentials for `user` and `password`.
    package init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// The `Authorization` header value: `Basic` and base64 of `user:password`.
    package var authorizationHeaderValue: String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }
}
