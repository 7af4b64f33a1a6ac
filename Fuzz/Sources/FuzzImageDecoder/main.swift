import Foundation
import FuzzDriver

// libFuzzer runs fuzzImageDecoder(_:_:) on every input (see FuzzDriver.h for why the driver is called here).
exit(osprey_fuzz_run(CommandLine.argc, CommandLine.unsafeArgv) { data, size in fuzzImageDecoder(data!, size) })
