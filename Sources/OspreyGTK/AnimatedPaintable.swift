import CGtk
import Foundation
import Osprey

extension Texture {
    /// A new `GdkPaintable *` playing the animation this texture is the first frame of
    /// (``animation``, or ``frameDecoder`` for frames decoded on demand), which any `GtkPicture`
    /// (`gtk_picture_set_paintable`) or other paintable consumer can show; `nil` for a still image.
    /// It plays with `settings` (default ``AnimationSettings/init(autoplay:loopCount:maxBufferedFrames:maxBufferBytes:)``'s
    /// defaults) on GLib timeouts, frames made ahead in a bounded buffer as ``OspreyPicture`` does,
    /// and stays on the last frame after its loops. The caller owns the returned reference
    /// (`g_object_unref` it once handed to a widget); finalising it stops playback.
    @MainActor public func makeAnimatedPaintable(settings: AnimationSettings = AnimationSettings()) -> OpaquePointer? {
        let buffer: AnimationFrameBuffer
        if let decoder = frameDecoder, decoder.frameCount > 1 {
            let capacity = settings.bufferCapacity(frameCount: decoder.frameCount, width: decoder.width, height: decoder.height)
            buffer = AnimationFrameBuffer(decoder: decoder, capacity: capacity, first: self)
        } else if let image = animation, image.frameCount > 1 {
            let capacity = settings.bufferCapacity(frameCount: image.frameCount, width: image.width, height: image.height)
            buffer = AnimationFrameBuffer(image: image, capacity: capacity)
        } else {
            return nil
        }
        return AnimatedPaintable.make(buffer: buffer, first: self, settings: settings)
    }
}

/// The instance of the `OspreyAnimatedPaintable` GObject type: a `GObject` and the player it owns.
struct AnimatedPaintableInstance {
    var parent: GObject
    var player: UnsafeMutableRawPointer?
}

/// The player behind an `OspreyAnimatedPaintable` (a GObject implementing `GdkPaintable`): advances
/// the frame on one-shot GLib timeouts by each frame's delay and draws the current frame's texture.
/// The GObject owns it (released on finalise, which removes the pending timeout).
@MainActor
final class AnimatedPaintable: SystemAwareAnimation {
    private let buffer: AnimationFrameBuffer
    private let delays: [UInt32]
    private let loopCount: Int
    private var frame = 0
    private var loops = 0
    private var timer: guint = 0
    /// Paused because the system saves power: plays again when it stops.
    private var pausedForPower = false
    /// The texture drawn: the current frame's once made, the previous one until then.
    private var current: Texture?
    /// The GObject; not referenced (it owns this object).
    private let object: UnsafeMutablePointer<AnimatedPaintableInstance>

    private init(buffer: AnimationFrameBuffer, first: Texture, settings: AnimationSettings, object: UnsafeMutablePointer<AnimatedPaintableInstance>) {
        self.buffer = buffer
        self.object = object
        current = first
        loopCount = max(0, settings.loopCount ?? buffer.loopCount)
        // Below 10 ms counts as 100 ms, as browsers play GIFs (and the picture does).
        delays = (0..<buffer.frameCount).map { index in
            let delay = index < buffer.frameDelays.count ? buffer.frameDelays[index] : 100
            return UInt32(delay < 10 ? 100 : delay)
        }
    }

    /// A new `OspreyAnimatedPaintable` playing `buffer` from `first` (transfer full).
    static func make(buffer: AnimationFrameBuffer, first: Texture, settings: AnimationSettings) -> OpaquePointer {
        let raw = g_object_new_with_properties(type, 0, nil, nil)!
        let object = UnsafeMutableRawPointer(raw).assumingMemoryBound(to: AnimatedPaintableInstance.self)
        let player = AnimatedPaintable(buffer: buffer, first: first, settings: settings, object: object)
        object.pointee.player = Unmanaged.passRetained(player).toOpaque()
        buffer.prefetchWithinMemory(from: 0)
        let savesPower = SystemMonitors.register(player)
        if settings.autoplay {
            if savesPower { player.pausedForPower = true } else { player.schedule() }
        }
        return OpaquePointer(raw)
    }

    /// Whether the next frame is scheduled.
    var isPlaying: Bool { timer != 0 }

    /// Pauses while the system saves power (`enabled`) and plays again after, from the frame shown.
    func powerSaverChanged(_ enabled: Bool) {
        if enabled, timer != 0 {
            g_source_remove(timer)
            timer = 0
            pausedForPower = true
        } else if !enabled, pausedForPower {
            pausedForPower = false
            schedule()
        }
    }

    /// Releases every buffered frame but the one shown (a critical low-memory warning).
    func keepShownFrameOnly() {
        buffer.keep(frame: frame)
    }

    /// The player of `paintable`, an `OspreyAnimatedPaintable` (read without the main actor: a pointer in the
    /// instance).
    nonisolated static func player(_ paintable: OpaquePointer?) -> AnimatedPaintable? {
        guard let paintable else { return nil }
        let object = UnsafeMutableRawPointer(paintable).assumingMemoryBound(to: AnimatedPaintableInstance.self)
        return object.pointee.player.map { Unmanaged<AnimatedPaintable>.fromOpaque($0).takeUnretainedValue() }
    }

    private func schedule() {
        let box = Unmanaged.passRetained(WeakReference(self)).toOpaque()
        timer = g_timeout_add_full(
            G_PRIORITY_DEFAULT, delays[frame],
            { data in
                MainActor.assumeIsolated { GObjectSupport.owner(data, as: AnimatedPaintable.self)?.advance() }
                return 0  // G_SOURCE_REMOVE: advance() schedules the next frame
            }, box, { data in Unmanaged<AnyObject>.fromOpaque(data!).release() })
    }

    private func advance() {
        timer = 0
        if frame == delays.count - 1 {
            loops += 1
            if loopCount > 0 && loops >= loopCount { return }
            frame = 0
        } else {
            frame += 1
        }
        buffer.prefetchWithinMemory(from: frame)
        if let texture = buffer.texture(at: frame) {
            current = texture
            gdk_paintable_invalidate_contents(OpaquePointer(object))
        }
        schedule()
    }

    private func finalised() {
        if timer != 0 { g_source_remove(timer) }
        timer = 0
        current = nil
    }

    // MARK: - The GObject type

    /// `GObjectClass.finalize` of GObject, chained up to from this type's.
    nonisolated(unsafe) private static var parentFinalize: (@convention(c) (UnsafeMutablePointer<GObject>?) -> Void)?

    /// `OspreyAnimatedPaintable`, registered on first use: a `GObject` implementing `GdkPaintable`.
    private static let type: GType = {
        var info = GTypeInfo()
        info.class_size = guint16(MemoryLayout<GObjectClass>.size)
        info.instance_size = guint16(MemoryLayout<AnimatedPaintableInstance>.size)
        info.class_init = { klass, _ in
            let objectClass = klass!.assumingMemoryBound(to: GObjectClass.self)
            let parent = g_type_class_peek_parent(klass)!.assumingMemoryBound(to: GObjectClass.self)
            AnimatedPaintable.parentFinalize = parent.pointee.finalize
            objectClass.pointee.finalize = { object in
                let instance = UnsafeMutableRawPointer(object!).assumingMemoryBound(to: AnimatedPaintableInstance.self)
                if let player = instance.pointee.player {
                    instance.pointee.player = nil
                    let unmanaged = Unmanaged<AnimatedPaintable>.fromOpaque(player)
                    MainActor.assumeIsolated { unmanaged.takeUnretainedValue().finalised() }
                    unmanaged.release()
                }
                AnimatedPaintable.parentFinalize?(object)
            }
        }
        // G_TYPE_OBJECT is G_TYPE_MAKE_FUNDAMENTAL (20), a macro Swift does not import.
        let type = g_type_register_static(GType(20 << G_TYPE_FUNDAMENTAL_SHIFT), "OspreyAnimatedPaintable", &info, GTypeFlags(rawValue: 0))
        var interface = GInterfaceInfo()
        interface.interface_init = { iface, _ in
            let paintable = iface!.assumingMemoryBound(to: GdkPaintableInterface.self)
            paintable.pointee.snapshot = { paintable, snapshot, width, height in
                let player = AnimatedPaintable.player(paintable)
                // The snapshot's address, not the pointer: a raw pointer is not Sendable.
                let address = UInt(bitPattern: snapshot)
                MainActor.assumeIsolated {
                    guard let texture = player?.current else { return }
                    gdk_paintable_snapshot(texture.paintable, OpaquePointer(bitPattern: address), width, height)
                }
            }
            paintable.pointee.get_flags = { _ in GDK_PAINTABLE_STATIC_SIZE }
            paintable.pointee.get_intrinsic_width = { paintable in
                let player = AnimatedPaintable.player(paintable)
                return MainActor.assumeIsolated { Int32(player?.buffer.width ?? 0) }
            }
            paintable.pointee.get_intrinsic_height = { paintable in
                let player = AnimatedPaintable.player(paintable)
                return MainActor.assumeIsolated { Int32(player?.buffer.height ?? 0) }
            }
        }
        g_type_add_interface_static(type, gdk_paintable_get_type(), &interface)
        return type
    }()
}
