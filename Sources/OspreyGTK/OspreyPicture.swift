import CGtk
import Osprey

/// A GTK widget that shows images loaded by Osprey: a `GtkOverlay` holding a `GtkPicture`
/// (default) or a `GtkImage`, with a spinner overlaid while loading. Use it like any
/// ``Osprey/ImageTarget``:
///
/// ```swift
/// let picture = OspreyPicture()
/// gtk_window_set_child(GtkWindowPointer(window), picture.widget)
/// picture.osprey.setImage(with: URL(string: "https://example.com/photo.jpg"),
///                         settings: .init(indicator: OspreyPicture.spinner, transition: .fade()))
/// ```
///
/// The GTK widget owns this object: it lives as long as ``widget`` (the widget's data holds it),
/// and when the widget is finalised its load is cancelled. Make one per widget: ``init(kind:)``
/// for a new widget, ``attached(to:)`` for a `GtkPicture` or `GtkImage` you already have. The
/// first one made installs the main actor on GLib's loop (``GLibMainActor/install()``): no set-up
/// call is needed under `g_application_run`. A picture made by ``init(kind:)`` that is allocated
/// larger than the size its image was decoded for (set before layout, at its size request) loads
/// that larger size from the cached original.
@MainActor
public final class OspreyPicture: ImageTarget {
    /// Which GTK widget shows the image.
    public enum Kind: Sendable {
        /// A `GtkPicture`, the image fitted inside its allocation, aspect kept, centred.
        case picture
        /// A `GtkImage`, an icon-sized image.
        case image
    }

    /// What the widget shows: a texture made off the main actor.
    public typealias Content = Texture

    /// The widget to put in a container: a `GtkOverlay` holding ``picture`` for ``init(kind:)``,
    /// ``picture`` itself for ``attached(to:)``.
    public let widget: UnsafeMutablePointer<GtkWidget>
    /// The `GtkPicture` or `GtkImage` showing the image.
    public let picture: UnsafeMutablePointer<GtkWidget>
    /// Which widget ``picture`` is.
    public let kind: Kind
    /// The request state of this widget.
    public let ospreyController = ImageTargetController()
    /// The texture shown, `nil` when the widget is empty.
    public private(set) var texture: Texture?
    /// Whether the GTK widget still exists (it was not finalised).
    public private(set) var isAlive = true
    private var loadingSpinner: LoadingSpinner?
    /// How animated images play (applies to images shown after it is set). Default
    /// ``AnimationSettings/init(autoplay:loopCount:maxBufferedFrames:maxBufferBytes:)``'s defaults:
    /// autoplay, the image's loop count, 8 frames or 16 MiB buffered.
    public var animationSettings = AnimationSettings()
    /// The player of the animated image shown, `nil` for a still image or none.
    public private(set) var animation: AnimationPlayer?

    private static let dataKey = "osprey-picture"

    /// A new `GtkOverlay` with a `GtkPicture` (or `GtkImage`, `kind` default `.picture`) inside.
    /// The overlay is floating, as new GTK widgets are: adding it to a container takes it.
    public init(kind: Kind = .picture) {
        GLibMainActor.install()  // first: it stops with a message when GTK is not initialised
        self.kind = kind
        let overlay = gtk_overlay_new()!
        picture = kind == .picture ? gtk_picture_new()! : gtk_image_new()!
        gtk_overlay_set_child(OpaquePointer(overlay), picture)
        widget = overlay
        configure()
        watchSize()
    }

    /// An empty `GtkDrawingArea` over the picture, allocated the overlay's size: its `resize`
    /// signal is the allocation change GTK 4 gives no other widget a signal for.
    private func watchSize() {
        let area = gtk_drawing_area_new()!
        gtk_widget_set_can_target(area, 0)
        gtk_overlay_add_overlay(OpaquePointer(widget), area)
        let resized: @convention(c) (OpaquePointer?, Int32, Int32, UnsafeMutableRawPointer?) -> Void = { _, _, _, data in
            MainActor.assumeIsolated { GObjectSupport.owner(data, as: OspreyPicture.self)?.allocationChanged() }
        }
        GObjectSupport.connect(UnsafeMutableRawPointer(area), "resize", unsafeBitCast(resized, to: GCallback.self), weakly: self)
    }

    /// Loads the image again when the widget grew past the size its image was decoded for (the
    /// request made before layout decoded at the size request): from the original in the disk
    /// cache, keeping the image shown meanwhile.
    private func allocationChanged() {
        // An animation's frames are full size already; an image smaller than the box it was
        // decoded for is its original, which a larger box does not sharpen.
        guard isAlive, animation == nil, let sized = ospreyController.sizedRequest, let now = ospreyPixelSize,
            now.width > sized.width || now.height > sized.height,
            texture.map({ $0.width >= sized.width || $0.height >= sized.height }) ?? true
        else { return }
        sized.reload()
    }

    private init(existing: UnsafeMutablePointer<GtkWidget>, kind: Kind) {
        self.kind = kind
        picture = existing
        widget = existing
        configure()
    }

    /// The `OspreyPicture` of a `GtkPicture` or `GtkImage` (or of a widget made by ``init(kind:)``),
    /// made on first use.
    public static func attached(to existing: UnsafeMutablePointer<GtkWidget>) -> OspreyPicture {
        if let found = of(existing) { return found }
        let isImage =
            g_type_check_instance_is_a(UnsafeMutableRawPointer(existing).assumingMemoryBound(to: GTypeInstance.self), gtk_image_get_type()) != 0
        return OspreyPicture(existing: existing, kind: isImage ? .image : .picture)
    }

    /// The `OspreyPicture` attached to `widget`, if any.
    public static func of(_ widget: UnsafeMutablePointer<GtkWidget>) -> OspreyPicture? {
        guard let data = g_object_get_data(GObjectSupport.object(widget), dataKey) else { return nil }
        return Unmanaged<OspreyPicture>.fromOpaque(data).takeUnretainedValue()
    }

    private func configure() {
        GLibMainActor.install()
        if kind == .picture {
            gtk_picture_set_content_fit(OpaquePointer(picture), GTK_CONTENT_FIT_CONTAIN)
            gtk_picture_set_can_shrink(OpaquePointer(picture), 1)
        }
        // The widget holds this object; finalising the widget cancels the load and releases it.
        g_object_set_data_full(
            GObjectSupport.object(widget), Self.dataKey, Unmanaged.passRetained(self).toOpaque(),
            { data in
                let picture = Unmanaged<OspreyPicture>.fromOpaque(data!)
                MainActor.assumeIsolated { picture.takeUnretainedValue().widgetFinalised() }
                picture.release()
            })
    }

    private func widgetFinalised() {
        // Not alive first: the widget's tick callbacks and signals go with it, so the player
        // must not touch them.
        isAlive = false
        animation?.stop()
        animation = nil
        ospreyController.cancel(finishingDownload: false)
        texture = nil
    }

    // MARK: - ImageTarget

    /// The allocated size (or, before allocation, the size request) times the scale factor.
    public var ospreyPixelSize: (width: Int, height: Int)? {
        guard isAlive else { return nil }
        var width = Int(gtk_widget_get_width(widget))
        var height = Int(gtk_widget_get_height(widget))
        if width <= 0 || height <= 0 {
            var requestWidth: Int32 = 0
            var requestHeight: Int32 = 0
            gtk_widget_get_size_request(widget, &requestWidth, &requestHeight)
            (width, height) = (Int(requestWidth), Int(requestHeight))
        }
        guard width > 0, height > 0 else { return nil }
        let scale = Int(max(1, gtk_widget_get_scale_factor(widget)))
        return (width * scale, height * scale)
    }

    /// Whether a texture is shown.
    public var ospreyHasContent: Bool { texture != nil }

    /// A texture sharing the image's pixels (see ``Texture/init(image:frame:)``).
    public nonisolated static func makeContent(_ image: Image) -> Texture? {
        Texture(image: image)
    }

    /// The first frame and the frame decoder of an animation loaded on demand
    /// (``Osprey/ImageResult/frameDecoder``, see ``ospreyDecodesFramesOnDemand``), else
    /// ``makeContent(_:)`` of the image.
    public nonisolated static func makeContent(for result: ImageResult) -> Texture? {
        guard let decoder = result.frameDecoder else { return makeContent(result.image) }
        return Texture(firstFrame: result.image, of: decoder)
    }

    /// `true`: `setImage` asks for an animated GIF or WebP as its first frame and a frame decoder
    /// (``Osprey/RequestOption/animationFramesOnDemand(_:)``), and the picture plays it with each frame
    /// decoded as playback reaches it, so the decoded pixels held stay within
    /// ``animationSettings``' buffer whatever the frame count. The frames are full size (GTK fits
    /// them to the widget). Pass `.animationFramesOnDemand(false)` in the options to decode every
    /// frame at once; a memory-cache hit of an animation decoded whole plays from its frames.
    public nonisolated static var ospreyDecodesFramesOnDemand: Bool { true }

    /// Shows `content` (`nil` clears), at full opacity. The first frame of an animated image
    /// (``Texture/animation``, or ``Texture/frameDecoder`` for frames decoded on demand) starts an
    /// ``AnimationPlayer`` with ``animationSettings``; anything else stops the one playing.
    public func display(_ content: Texture?) {
        guard isAlive else { return }
        texture = content
        gtk_widget_set_opacity(picture, 1)
        setPaintable(content)
        animation?.stop()
        if let decoder = content?.frameDecoder, decoder.frameCount > 1 {
            animation = AnimationPlayer(decoder: decoder, first: content, picture: self, settings: animationSettings)
        } else {
            animation = content?.animation.map { AnimationPlayer(image: $0, picture: self, settings: animationSettings) }
        }
    }

    /// Shows one frame of the animation playing, leaving ``texture`` as it is.
    func showFrame(_ frame: Texture) {
        guard isAlive else { return }
        setPaintable(frame)
    }

    private func setPaintable(_ content: Texture?) {
        switch kind {
        case .picture: gtk_picture_set_paintable(OpaquePointer(picture), content?.paintable)
        case .image: gtk_image_set_from_paintable(OpaquePointer(picture), content?.paintable)
        }
    }

    // MARK: - Indicator

    /// An indicator setting for ``Osprey/TargetSettings/indicator``: a spinner over
    /// the picture (pictures made by ``init(kind:)`` only; others show none).
    public static let spinner: @MainActor @Sendable (OspreyPicture) -> (any ImageIndicator)? = { $0.spinnerIndicator() }

    private func spinnerIndicator() -> (any ImageIndicator)? {
        guard isAlive, widget != picture else { return nil }
        if loadingSpinner == nil {
            let made = LoadingSpinner()
            gtk_overlay_add_overlay(OpaquePointer(widget), made.widget)
            loadingSpinner = made
        }
        return SpinnerIndicator(picture: self)
    }

    fileprivate func setSpinning(_ on: Bool) {
        guard isAlive, let loadingSpinner else { return }
        loadingSpinner.set(spinning: on)
    }
}

/// The spinner (`LoadingSpinner`) of one ``OspreyPicture``, shown while its request runs.
@MainActor
final class SpinnerIndicator: ImageIndicator {
    private weak var picture: OspreyPicture?

    init(picture: OspreyPicture) {
        self.picture = picture
    }

    func startAnimating() { picture?.setSpinning(true) }
    func stopAnimating() { picture?.setSpinning(false) }
}
