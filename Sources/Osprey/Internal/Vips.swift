import COspreyVips
import Foundation

/// libvips' process-wide state: initialised once, on first use, with its operation cache off.
enum Vips {
    /// The outcome of the one-time initialisation; `nil` on success.
    private static let initFailure: String? = {
        osprey_vips_init() == 0 ? nil : takeError()
    }()

    /// Initialises libvips if needed. Traps only if libvips itself cannot start, which means the
    /// shared library is unusable; every later call would fail anyway.
    static func ensureInitialised() {
        if let failure = initFailure {
            fatalError("libvips failed to initialise: \(failure)")
        }
    }

    /// Takes and clears libvips' error buffer, as a single line.
    ///
    /// The buffer is process-wide, so under concurrency a message may include another thread's
    /// error; the operation that failed is still the one reported by its return code.
    static func takeError() -> String {
        guard let cString = vips_error_buffer_copy() else { return "unknown libvips error" }
        defer { g_free(cString) }
        let text = String(cString: cString)
            .split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .joined(separator: "; ")
        return text.isEmpty ? "unknown libvips error" : text
    }

    /// Whether this libvips build has the named operation (e.g. `heifsave_buffer`). An operation
    /// of a libvips module (`heif…`, `magick…`) loads that module first (`osprey_has_operation`).
    static func hasOperation(_ name: String) -> Bool {
        ensureInitialised()
        return osprey_has_operation(name) != 0
    }
}

/// A libvips failure, before it is given its Osprey-level meaning.
struct VipsFailure: Error {
    let message: String
}

/// One reference to an immutable `VipsImage`.
///
/// `@unchecked Sendable` is safe because a `VipsImage` is never mutated after it is built:
/// libvips operations only read their inputs and make new images, and GObject reference counting
/// is atomic. The one mutating libvips API Osprey uses (drawing into a mask) runs on a private
/// image before it is wrapped and shared (see ``VipsImageRef/drawing(_:)``).
final class VipsImageRef: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<VipsImage>

    init(taking pointer: UnsafeMutablePointer<VipsImage>) {
        self.pointer = pointer
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(pointer))
    }

    /// Runs a libvips call that produces one image; wraps the result or throws libvips' message.
    static func make(_ body: (inout UnsafeMutablePointer<VipsImage>?) -> Int32) throws(VipsFailure) -> VipsImageRef {
        Vips.ensureInitialised()
        var out: UnsafeMutablePointer<VipsImage>?
        let status = body(&out)
        guard status == 0, let out else {
            if let out { g_object_unref(UnsafeMutableRawPointer(out)) }
            throw VipsFailure(message: Vips.takeError())
        }
        return VipsImageRef(taking: out)
    }

    /// Runs a one-input libvips operation on this image.
    func apply(_ body: (UnsafeMutablePointer<VipsImage>, inout UnsafeMutablePointer<VipsImage>?) -> Int32) throws(VipsFailure) -> VipsImageRef {
        try VipsImageRef.make { out in body(pointer, &out) }
    }

    var width: Int { Int(vips_image_get_width(pointer)) }
    var height: Int { Int(vips_image_get_height(pointer)) }
    var bands: Int { Int(vips_image_get_bands(pointer)) }
    var bandFormat: VipsBandFormat { vips_image_get_format(pointer) }
    var interpretation: VipsInterpretation { vips_image_get_interpretation(pointer) }
    var hasAlpha: Bool { vips_image_hasalpha(pointer) != 0 }
    /// Bytes the pixels take once in memory.
    var memoryCost: Int {
        Int(vips_image_get_width(pointer)) * Int(vips_image_get_height(pointer)) * Int(vips_image_get_bands(pointer))
            * Int(vips_format_sizeof(bandFormat))
    }

    func int(_ name: String) -> Int? {
        guard vips_image_get_typeof(pointer, name) != 0 else { return nil }
        var value: Int32 = 0
        guard vips_image_get_int(pointer, name, &value) == 0 else { return nil }
        return Int(value)
    }

    func intArray(_ name: String) -> [Int]? {
        var values: UnsafeMutablePointer<Int32>?
        let count = osprey_get_int_array(pointer, name, &values)
        guard count >= 0, let values else { return nil }
        return (0..<Int(count)).map { Int(values[$0]) }
    }

    /// Whether the pixels are held in memory (rather than computed on demand from a pipeline).
    var isMaterialised: Bool {
        let type = pointer.pointee.dtype
        return type == VIPS_IMAGE_SETBUF || type == VIPS_IMAGE_SETBUF_FOREIGN
    }

    func has(_ name: String) -> Bool { vips_image_get_typeof(pointer, name) != 0 }

    /// Renders every pixel into memory, so later reads never go back to the decoder.
    ///
    /// Images up to ``inlineRenderLimit`` pixels (and all images when libvips runs one thread)
    /// are rendered on the calling thread: libvips' thread pool would hand every strip to a worker
    /// thread and back, which for a thumbnail costs more than the pixels. Larger images use the
    /// pool, which renders their strips in parallel.
    func materialised() throws(VipsFailure) -> VipsImageRef {
        if width * height <= Self.inlineRenderLimit || vips_concurrency_get() <= 1 {
            return try VipsImageRef.make { osprey_copy_memory_inline(pointer, &$0) }
        }
        return try VipsImageRef.make { out in
            out = vips_image_copy_memory(pointer)
            return out == nil ? -1 : 0
        }
    }

    /// The largest image (in pixels, all frames) rendered on the calling thread: 4 megapixels.
    static let inlineRenderLimit = 4_000_000

    /// A private, writable in-memory copy for drawing; the closure draws, then the image is frozen.
    func drawing(_ draw: (UnsafeMutablePointer<VipsImage>) -> Int32) throws(VipsFailure) -> VipsImageRef {
        let copy = try materialised()
        guard draw(copy.pointer) == 0 else { throw VipsFailure(message: Vips.takeError()) }
        return copy
    }
}
