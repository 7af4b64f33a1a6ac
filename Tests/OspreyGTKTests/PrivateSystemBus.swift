import Foundation
import OspreyTestSupport

/// A D-Bus system bus of the test's own (`dbus-daemon` on a socket in a temporary directory, its
/// address in this process's `DBUS_SYSTEM_BUS_ADDRESS`) with a stand-in for power-profiles-daemon
/// on it: `net.hadess.PowerProfiles` at `/net/hadess/PowerProfiles` with the `ActiveProfile`
/// property GLib's `GPowerProfileMonitor` reads and watches (a short Python program on GLib's own
/// D-Bus, apt `python3-gi`), whose profile the test sets (``setProfile(_:)``).
///
/// GIO connects to the system bus once per process, so this works only in a process where nothing
/// used it before: `scripts/test.sh` runs the test that uses it alone.
///
/// `@unchecked Sendable`: its properties are set once, by `start()`, and one test drives it, one
/// call after another (`Process` and `Pipe` are not marked `Sendable`).
final class PrivateSystemBus: @unchecked Sendable {
    private let directory: URL
    private let daemon: Process
    private let service: Process
    private let input: Pipe
    private let output: Pipe

    private init(directory: URL, daemon: Process, service: Process, input: Pipe, output: Pipe) {
        (self.directory, self.daemon, self.service, self.input, self.output) = (directory, daemon, service, input, output)
    }

    /// The program serving `net.hadess.PowerProfiles`: it answers `ActiveProfile` (first
    /// `balanced`), and sets it to each line it reads, emitting `PropertiesChanged` as
    /// power-profiles-daemon does, then prints `set <profile>`; it prints `ready` once it owns the
    /// name, and ends at the end of its input.
    static let serviceProgram = """
        import sys
        from gi.repository import Gio, GLib
        XML = ('<node><interface name="net.hadess.PowerProfiles">'
               '<property name="ActiveProfile" type="s" access="read"/></interface></node>')
        PATH, IFACE = "/net/hadess/PowerProfiles", "net.hadess.PowerProfiles"
        profile = "balanced"
        bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)
        def get_property(connection, sender, path, interface, name):
            return GLib.Variant("s", profile)
        def on_input(channel, condition):
            global profile
            line = sys.stdin.readline()
            if not line:
                loop.quit()
                return False
            profile = line.strip()
            changed = GLib.Variant("(sa{sv}as)", (IFACE, {"ActiveProfile": GLib.Variant("s", profile)}, []))
            bus.emit_signal(None, PATH, "org.freedesktop.DBus.Properties", "PropertiesChanged", changed)
            bus.flush_sync(None)
            print("set " + profile, flush=True)
            return True
        bus.register_object(PATH, Gio.DBusNodeInfo.new_for_xml(XML).interfaces[0], None, get_property, None)
        Gio.bus_own_name_on_connection(bus, IFACE, Gio.BusNameOwnerFlags.NONE, lambda c, n: print("ready", flush=True), None)
        GLib.io_add_watch(GLib.IOChannel.unix_new(0), GLib.PRIORITY_DEFAULT, GLib.IOCondition.IN | GLib.IOCondition.HUP, on_input)
        loop = GLib.MainLoop()
        loop.run()
        """

    /// Starts the bus and the service, and points this process's `DBUS_SYSTEM_BUS_ADDRESS` at it.
    static func start() async throws -> PrivateSystemBus {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-bus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("bus.conf")
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>system</type>
          <listen>unix:path=\(directory.path)/socket</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """.write(to: config, atomically: true, encoding: .utf8)
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        daemon.arguments = ["--config-file=\(config.path)", "--nofork", "--print-address=1"]
        let address = Pipe()
        daemon.standardOutput = address
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        let line = try await daemon.nextLine(of: address, within: .seconds(30), "dbus-daemon's address")
        setenv("DBUS_SYSTEM_BUS_ADDRESS", line, 1)

        let service = Process()
        service.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        service.arguments = ["-c", serviceProgram]
        service.environment = ProcessInfo.processInfo.environment.merging(["DBUS_SYSTEM_BUS_ADDRESS": line]) { $1 }
        let (input, output) = (Pipe(), Pipe())
        service.standardInput = input
        service.standardOutput = output
        try service.run()
        let bus = PrivateSystemBus(directory: directory, daemon: daemon, service: service, input: input, output: output)
        let ready = try await service.nextLine(of: output, within: .seconds(30), "the power-profiles service to own its name")
        guard ready == "ready" else {
            await bus.stop()
            throw BusError(message: "the power-profiles service said \(ready.debugDescription) instead of ready")
        }
        return bus
    }

    /// Sets the active profile (`power-saver`, `balanced`, `performance`) and waits until the
    /// service has announced it on the bus.
    func setProfile(_ profile: String) async throws {
        input.fileHandleForWriting.write(Data("\(profile)\n".utf8))
        let answer = try await service.nextLine(of: output, within: .seconds(30), "the service to set \(profile)")
        if answer != "set \(profile)" { throw BusError(message: "the power-profiles service said \(answer.debugDescription) to \(profile)") }
    }

    /// Ends the service (SIGTERM) and the bus (SIGKILL: dbus-daemon started by the test runner
    /// leaves SIGTERM waiting), and removes the directory.
    func stop() async {
        try? input.fileHandleForWriting.close()
        service.terminate()
        _ = try? await service.exitStatus(within: .seconds(30), "the power-profiles service to exit")
        kill(daemon.processIdentifier, SIGKILL)
        _ = try? await daemon.exitStatus(within: .seconds(30), "dbus-daemon to exit")
        unsetenv("DBUS_SYSTEM_BUS_ADDRESS")
        try? FileManager.default.removeItem(at: directory)
    }
}

/// The private bus's service said something it should not have.
struct BusError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
