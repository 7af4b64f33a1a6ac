import COspreyVips
import Foundation

/// What an image's header says, read without decoding its pixels.
public struct ImageHeader: Sendable, Hashable, Codable {
    /// The format sniffed from the magic bytes.
    public var format: ImageFormat
    /// Width of one frame as stored (before auto-orientation).
    public var width: Int
    /// Height of one frame as stored (before auto-orientation).
    public var height: Int
    /// Number of frames (pages); 1 for a still image.
    public var frameCount: Int
    /// The EXIF orientation (``ImageOrientation/up`` when absent).
    public var orientation: ImageOrientation
    /// Whether the stored image has an alpha channel.
    public var hasAlpha: Bool
}

/// Decodes bytes into ``Image`` values with libvips, honouring ``DecodingOptions``.
///
/// Formats are recognised from magic bytes only (see ``ImageFormat/init(sniffing:)``) and each is
/// handed to its own libvips loader; anything else is refused before libvips sees it. Decoding is
/// strict about damage: truncated data is an error, not a grey band. Every failure is an
/// ``OspreyError/decoding(_:)`` error; no input crashes or hangs the decoder.
public struct ImageDecoder: Sendable {
    /// The options every decode uses. Default: ``DecodingOptions/default``.
    public var options: DecodingOptions

    /// A decoder with `options` (default ``DecodingOptions/default``).
    public init(options: DecodingOptions = .default) {
        self.options = options
    }

    /// Reads the header of `data` without decoding pixels. A WebP whose headers declare more than
    /// ``DecodingOptions/maxSourcePixels`` is refused first (libvips would map that canvas).
    public func header(of data: Data) throws(OspreyError) -> ImageHeader {
        let format = try Self.sniffedFormat(of: data)
        let options = self.options
        return try Self.withBytes(data) { (buffer) throws(OspreyError) -> ImageHeader in
            try Self.checkDeclaredSize(buffer, format: format, options: options)
            let probe = try Self.loadHeader(buffer, format: format, allFrames: true)
            return probe.header
        }
    }

    /// Decodes `data` into an in-memory image.
    public func decode(_ data: Data) throws(OspreyError) -> Image {
        try decode(data, plan: nil).image
    }

    /// Decodes `data`, folding `plan` (a processor chain's first step) into the decode when it
    /// shrinks this source (see ``DecodePlan``). `folded` says whether it did: then `image` is
    /// that step's output, else the full decode.
    func decode(_ data: Data, plan: DecodePlan?) throws(OspreyError) -> (image: Image, folded: Bool) {
        let format = try Self.sniffedFormat(of: data)
        let options = self.options
        return try Self.withBytes(data) { (buffer) throws(OspreyError) -> (image: Image, folded: Bool) in
            try Self.checkDeclaredSize(buffer, format: format, options: options)
            if format.isVector { return (try Self.renderVector(buffer, format: format, options: options, plan: plan), false) }
            let probe = try Self.loadHeader(buffer, format: format, allFrames: !options.firstFrameOnly)
            let header = probe.header
            let frames = options.firstFrameOnly ? 1 : header.frameCount
            try options.checkSourcePixels(width: header.width, height: header.height, frames: frames)
            let (box, folded) = Self.decodeBox(header: header, frames: frames, options: options, plan: plan)
            do throws(VipsFailure) {
                let loaded = try Self.load(buffer, format: format, probe: probe, box: box, options: options)
                let frameHeight = loaded.height / max(1, frames)
                let pixelsInMemory = try loaded.normalisedToSRGB().materialised()
                let image = Image(
                    storage: pixelsInMemory, frameHeight: frameHeight, format: format,
                    frameDelays: probe.delays, loopCount: probe.loop, orientation: header.orientation)
                return (image, folded)
            } catch {
                throw Self.classify(error, format: format)
            }
        }
    }

    /// Decodes `data` and runs `processor` over it. When the processor begins with a resize or a
    /// downsample that shrinks this source, that step is done by the decode itself with libvips
    /// shrink-on-load (the full-size pixels are never held) and only the rest runs afterwards;
    /// otherwise this is ``decode(_:)`` followed by `processor`. The pipeline plans every decode
    /// this way.
    public func decode(_ data: Data, processedBy processor: any ImageProcessing) throws(OspreyError) -> Image {
        try decode(data, options: options, processedBy: processor)
    }

    /// Reads and decodes the file at `url`.
    public func decode(contentsOf url: URL) throws(OspreyError) -> Image {
        try decode(try Self.readFile(url))
    }

    /// Reads a file's bytes, mapping failures to ``OspreyError/DecodingReason/unreadableFile(path:message:)``.
    package static func readFile(_ url: URL) throws(OspreyError) -> Data {
        do {
            return try Data(contentsOf: url, options: .mappedIfSafe)
        } catch {
            let message = (error as? CocoaError).map { "\($0.code == .fileReadNoSuchFile ? "no such file" : $0.localizedDescription)" } ?? "\(error)"
            throw .decoding(.unreadableFile(path: url.path, message: message))
        }
    }

    // MARK: - Steps

    struct Probe {
        var header: ImageHeader
        var frameHeight: Int
        var delays: [Int]
        var loop: Int
        var isCMYK: Bool
        /// The header's image, opened for sequential access with the decode's frame option: the
        /// full-size load when no rotation is needed (one header parse instead of two).
        var image: VipsImageRef
    }

    /// The pixels of the source: shrunk on load into `box` when there is one, else at full size
    /// (upright when auto-orientation is on).
    private static func load(
        _ buffer: UnsafeRawBufferPointer, format: ImageFormat, probe: Probe, box: ShrinkBox?,
        options: DecodingOptions
    ) throws(VipsFailure) -> VipsImageRef {
        let header = probe.header
        if let box, format == .jpeg, let thumbnail = try jpegThumbnail(buffer, probe: probe, box: box, options: options) {
            return thumbnail
        }
        if let box, format == .png, let thumbnail = try opaquePNGThumbnail(probe: probe, box: box, options: options) {
            return thumbnail
        }
        if let box {
            let loaderOptions = format.loaderOptions(allFrames: !options.firstFrameOnly, sequential: false)
            return try VipsImageRef.make { out in
                osprey_thumbnail_buffer(
                    buffer.baseAddress, buffer.count, Int32(box.width), Int32(box.height),
                    Int32(box.size.rawValue), Int32(box.crop.rawValue), options.autoOrient ? 0 : 1, loaderOptions, &out)
            }
        }
        let rotate = options.autoOrient && header.orientation != .up
        guard rotate else { return probe.image }
        // The header's sequential load, read into memory top to bottom, then turned. Why not a
        // random-access load: libvips decodes one into memory through its thread pool (worker
        // threads woken and waited for), and it parses the header a second time.
        return try probe.image.materialised().mapFrames(frameHeight: probe.frameHeight) { (frame) throws(VipsFailure) in
            try frame.apply { osprey_autorot($0, &$1) }
        }.0
    }

    /// A thumbnail of a JPEG with libjpeg's DCT scaling to the largest 1/2, 1/4 or 1/8 of the
    /// source that still covers the box, then libvips' lanczos3 resize to the box: imgproxy's and
    /// Pillow's rule. (`vips_thumbnail` keeps a further factor of two for the resize, so for a
    /// 4000 × 3000 photo fitted into 512 it decodes 2000 × 1500, four times the pixels.) A CMYK
    /// source gets the colour transform cached per profile on the shrunk pixels (`vips_thumbnail`
    /// would build a new transform from the fallback CMYK profile for every image: ~30 ms).
    /// `nil` when a CMYK transform is not available; the caller then takes the usual path.
    private static func jpegThumbnail(
        _ buffer: UnsafeRawBufferPointer, probe: Probe, box: ShrinkBox, options: DecodingOptions
    ) throws(VipsFailure) -> VipsImageRef? {
        let header = probe.header
        let factor = jpegShrinkFactor(header: header, box: box, autoOrient: options.autoOrient)
        let rotate = options.autoOrient && header.orientation != .up
        let loaderOptions = "fail_on=truncated,shrink=\(factor)" + (rotate ? "" : ",access=sequential")
        var image = try VipsImageRef.make { out in osprey_load_buffer(buffer.baseAddress, buffer.count, loaderOptions, &out) }
        if probe.isCMYK {
            guard let converted = image.cachedTransformToSRGB() else { return nil }
            image = converted
        }
        if rotate {
            image = try image.apply { osprey_autorot($0, &$1) }
        }
        return try image.apply {
            osprey_thumbnail_image($0, Int32(box.width), Int32(box.height), Int32(box.size.rawValue), Int32(box.crop.rawValue), &$1)
        }
    }

    /// The DCT scaling (1, 2, 4 or 8) of a JPEG thumbnail into `box`: the largest that still covers it.
    static func jpegShrinkFactor(header: ImageHeader, box: ShrinkBox, autoOrient: Bool) -> Int {
        let (width, height) = header.upright(autoOrient: autoOrient)
        let ratios = (Double(width) / Double(max(1, box.width)), Double(height) / Double(max(1, box.height)))
        // A fit shrinks by the larger ratio; a cover (crop) or a stretch must keep the smaller one.
        let covers = box.crop != VIPS_INTERESTING_NONE || !box.preservesAspectRatio
        let shrink = covers ? min(ratios.0, ratios.1) : max(ratios.0, ratios.1)
        return shrink >= 8 ? 8 : shrink >= 4 ? 4 : shrink >= 2 ? 2 : 1
    }

    /// A thumbnail of a PNG whose alpha band is opaque everywhere (a file exported with an alpha
    /// channel it does not use): the colour bands are resized alone and the band is put back at its
    /// maximum. `vips_thumbnail` premultiplies an image with alpha in float around the resize,
    /// which for such a file costs more than its decode, and an opaque band resizes to itself. The check reads the pixels once, on this thread, into
    /// memory and stops at the first transparent line. `nil` (the caller streams the file through
    /// `vips_thumbnail`, which premultiplies) when the band has transparency, without an alpha
    /// band, for a source rotated by its EXIF orientation, or above
    /// ``VipsImageRef/inlineRenderLimit`` pixels: a streamed thumbnail never holds the full pixels.
    private static func opaquePNGThumbnail(probe: Probe, box: ShrinkBox, options: DecodingOptions) throws(VipsFailure) -> VipsImageRef? {
        let header = probe.header
        guard header.hasAlpha, header.width * header.height <= VipsImageRef.inlineRenderLimit,
            !(options.autoOrient && header.orientation != .up)
        else { return nil }
        let opaque: Double = probe.image.bandFormat == VIPS_FORMAT_USHORT ? 65535 : 255
        var copy: UnsafeMutablePointer<VipsImage>?
        let status = osprey_copy_memory_if_opaque(probe.image.pointer, &copy)
        guard status >= 0 else { throw VipsFailure(message: Vips.takeError()) }
        guard status == 1, let copy else { return nil }
        let pixels = VipsImageRef(taking: copy)
        let colour = try pixels.withoutAlpha().apply {
            osprey_thumbnail_image($0, Int32(box.width), Int32(box.height), Int32(box.size.rawValue), Int32(box.crop.rawValue), &$1)
        }
        return try colour.apply { osprey_bandjoin_const1($0, opaque, &$1) }
    }

    /// The format of `data` from its magic bytes, refused when empty, unknown, without a loader,
    /// or (GIF) without its trailer.
    static func sniffedFormat(of data: Data) throws(OspreyError) -> ImageFormat {
        guard !data.isEmpty else { throw .decoding(.emptyData) }
        guard let format = ImageFormat(sniffing: data) else {
            throw .decoding(.unsupportedFormat(leadingBytes: ImageFormat.leadingBytes(of: data)))
        }
        guard format.hasLoader else { throw .decoding(.noDecoder(format: format)) }
        // libnsgif decodes the frames that arrived and drops the rest silently; a GIF always ends
        // with the trailer byte 0x3B (padding after it is tolerated), so its absence means the file
        // was cut short.
        if format == .gif, data.last(where: { $0 != 0x00 && $0 != 0x0A && $0 != 0x0D }) != 0x3B {
            throw .decoding(.truncatedData(format: .gif, message: "the GIF trailer (0x3B) is missing"))
        }
        return format
    }

    /// libvips' webpload maps the whole canvas a header declares while it reads the header (1 GiB
    /// of address space for a 16383 x 16383 lie), so a WebP's declared size is checked before.
    static func checkDeclaredSize(_ buffer: UnsafeRawBufferPointer, format: ImageFormat, options: DecodingOptions) throws(OspreyError) {
        guard format == .webp, let size = declaredWebPSize(buffer) else { return }
        try options.checkSourcePixels(width: size.width, height: size.height, frames: 1)
    }

    /// The canvas size a WebP's headers declare, read by libwebp; `nil` when they cannot be read
    /// (libvips then reports the damage).
    static func declaredWebPSize(_ buffer: UnsafeRawBufferPointer) -> (width: Int, height: Int)? {
        var width: Int32 = 0
        var height: Int32 = 0
        guard osprey_webp_declared_size(buffer.baseAddress, buffer.count, &width, &height) == 0 else { return nil }
        return (Int(width), Int(height))
    }

    /// Runs `body` with the bytes of `data` pinned; libvips reads them in place.
    static func withBytes<T>(_ data: Data, _ body: (UnsafeRawBufferPointer) throws(OspreyError) -> T) throws(OspreyError) -> T {
        let result: Result<T, OspreyError> = data.withUnsafeBytes { buffer in
            do throws(OspreyError) { return .success(try body(buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    static func loadHeader(_ buffer: UnsafeRawBufferPointer, format: ImageFormat, allFrames: Bool) throws(OspreyError) -> Probe {
        do throws(VipsFailure) {
            let options = format.loaderOptions(allFrames: allFrames, sequential: true)
            let image = try VipsImageRef.make { out in
                format.isVector
                    ? vectorLoad(buffer, format: format, scale: 1, sequential: true, out: &out)
                    : osprey_load_buffer(buffer.baseAddress, buffer.count, options, &out)
            }
            let pageHeight = image.int("page-height").flatMap { $0 > 0 && image.height % $0 == 0 ? $0 : nil } ?? image.height
            let frames = max(1, image.height / pageHeight)
            let orientation = image.int("orientation").flatMap(ImageOrientation.init(rawValue:)) ?? .up
            let header = ImageHeader(
                format: format, width: image.width, height: pageHeight, frameCount: frames,
                orientation: orientation, hasAlpha: image.hasAlpha)
            return Probe(
                header: header, frameHeight: pageHeight, delays: image.intArray("delay") ?? [], loop: image.int("loop") ?? 0,
                isCMYK: image.interpretation == VIPS_INTERPRETATION_CMYK, image: image)
        } catch {
            throw classify(error, format: format)
        }
    }

    /// The box a decode of `header` goes into, and whether `plan` is folded into it: the
    /// thumbnail and scale-down options' box, else the plan's shrink box (``DecodePlan``); `nil`:
    /// full size.
    static func decodeBox(header: ImageHeader, frames: Int, options: DecodingOptions, plan: DecodePlan?) -> (box: ShrinkBox?, folded: Bool) {
        if let box = targetBox(header: header, frames: frames, options: options) { return (box, false) }
        guard let plan else { return (nil, false) }
        let upright = header.upright(autoOrient: options.autoOrient)
        let box = plan.shrinkBox(sourceWidth: upright.width, sourceHeight: upright.height, frames: frames)
        return (box, box != nil)
    }

    /// The box to decode into, from the thumbnail and scale-down options; `nil` for full size.
    private static func targetBox(header: ImageHeader, frames: Int, options: DecodingOptions) -> ShrinkBox? {
        let (width, height) = header.upright(autoOrient: options.autoOrient)
        var box = options.thumbnail
        if let limit = options.scaleDownLimitBytes, limit > 0 {
            // SDWebImage's rule: the largest size whose RGBA pixels fit the byte limit, per frame.
            let allowedPixels = Double(limit) / 4 / Double(max(1, frames))
            let sourcePixels = Double(width * height)
            if sourcePixels > allowedPixels {
                let scale = (allowedPixels / sourcePixels).squareRoot()
                let w = max(1, Int((Double(width) * scale).rounded(.down)))
                let h = max(1, Int((Double(height) * scale).rounded(.down)))
                if let current = box {
                    box = .init(width: min(current.width, w), height: min(current.height, h), preserveAspectRatio: current.preserveAspectRatio)
                } else {
                    box = .init(width: w, height: h)
                }
            }
        }
        // A preserving box the image already fits in needs no thumbnail pass.
        if let current = box, current.preserveAspectRatio, width <= current.width, height <= current.height {
            return nil
        }
        return box.map(ShrinkBox.init)
    }

    /// Gives a libvips failure its meaning: truncation or other damage.
    static func classify(_ failure: VipsFailure, format: ImageFormat) -> OspreyError {
        let message = failure.message
        let lower = message.lowercased()
        let truncationWords = ["truncat", "premature", "unexpected end", "end of file", "not enough", "short read", "eof"]
        if truncationWords.contains(where: lower.contains) {
            return .decoding(.truncatedData(format: format, message: message))
        }
        return .decoding(.corruptData(format: format, message: message))
    }
}

extension ImageHeader {
    /// The frame size after auto-orientation (when `autoOrient`): width and height swapped for
    /// the EXIF orientations that turn the image by 90 degrees.
    func upright(autoOrient: Bool) -> (width: Int, height: Int) {
        autoOrient && orientation.swapsDimensions ? (height, width) : (width, height)
    }
}

extension ImageFormat {
    /// Whether this libvips build has a loader for the format, looked up once per process and
    /// format: the first AVIF/HEIF, BMP, JPEG XL or PDF source loads the libvips module that decodes it.
    var hasLoader: Bool {
        switch self {
        case .jpeg: Self.jpegLoads
        case .png: Self.pngLoads
        case .gif: Self.gifLoads
        case .webp: Self.webpLoads
        case .avif, .heif: Self.heifLoads
        case .tiff: Self.tiffLoads
        case .bmp: Self.bmpLoads
        case .jxl: Self.jxlLoads
        case .svg: Self.svgLoads
        case .pdf: Self.pdfLoads
        }
    }

    private static let jpegLoads = Vips.hasOperation("jpegload_buffer")
    private static let pngLoads = Vips.hasOperation("pngload_buffer")
    private static let gifLoads = Vips.hasOperation("gifload_buffer")
    private static let webpLoads = Vips.hasOperation("webpload_buffer")
    private static let heifLoads = Vips.hasOperation("heifload_buffer")
    private static let tiffLoads = Vips.hasOperation("tiffload_buffer")
    private static let bmpLoads = Vips.hasOperation("magickload_buffer")
    private static let jxlLoads = Vips.hasOperation("jxlload_buffer")
    private static let svgLoads = Vips.hasOperation("svgload_buffer")
    private static let pdfLoads = Vips.hasOperation("pdfload_buffer")

    /// The libvips loader option string: strict about truncation, all frames where the format animates.
    func loaderOptions(allFrames: Bool, sequential: Bool) -> String {
        var parts = ["fail_on=truncated"]
        if supportsAnimation { parts.append(allFrames ? "n=-1" : "n=1") }
        if sequential { parts.append("access=sequential") }
        return parts.joined(separator: ",")
    }
}

extension Image {
    /// Decodes `data` with `options` (default ``DecodingOptions/default``).
    public init(data: Data, options: DecodingOptions = .default) throws(OspreyError) {
        self = try ImageDecoder(options: options).decode(data)
    }

    /// Reads and decodes the file at `url` with `options` (default ``DecodingOptions/default``).
    public init(contentsOf url: URL, options: DecodingOptions = .default) throws(OspreyError) {
        self = try ImageDecoder(options: options).decode(contentsOf: url)
    }
}
