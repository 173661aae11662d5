import Foundation
import Glibc
public import LogbookJSON

/// What the figures were measured on: processors, CPU model, memory, kernel, the Swift
/// compiler and build configuration of this binary, and the git commit of the sources
/// when the bench runs inside a checkout.
public struct MachineInfo: Sendable, Equatable {
    public var processors: Int
    public var cpuModel: String
    public var memoryMegabytes: Int?
    public var kernel: String
    public var swift: String
    public var build: String
    public var gitCommit: String?

    public init(
        processors: Int, cpuModel: String, memoryMegabytes: Int?, kernel: String, swift: String, build: String,
        gitCommit: String?
    ) {
        self.processors = processors
        self.cpuModel = cpuModel
        self.memoryMegabytes = memoryMegabytes
        self.kernel = kernel
        self.swift = swift
        self.build = build
        self.gitCommit = gitCommit
    }

    /// This machine, now.
    public static func current() -> MachineInfo {
        MachineInfo(
            processors: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), cpuModel: cpuModel(),
            memoryMegabytes: memoryMegabytes(), kernel: kernel(), swift: compilerVersion, build: buildConfiguration,
            gitCommit: gitCommit())
    }

    public var json: JSONValue {
        [
            "processors": .int(processors), "cpuModel": .string(cpuModel),
            "memoryMegabytes": memoryMegabytes.map(JSONValue.int) ?? .null, "kernel": .string(kernel),
            "swift": .string(swift), "build": .string(build), "gitCommit": gitCommit.map(JSONValue.string) ?? .null,
        ]
    }

    /// One line for the top of the table.
    public var summary: String {
        let memory = memoryMegabytes.map { ", \(NumberFormat.grouped(Double($0))) MB" } ?? ""
        return "\(processors) × \(cpuModel)\(memory); Linux \(kernel); Swift \(swift), \(build) build"
            + (gitCommit.map { "; commit \($0.prefix(12))" } ?? "")
    }

    #if DEBUG
        static let buildConfiguration = "debug"
    #else
        static let buildConfiguration = "release"
    #endif

    /// The compiler that built this binary, to the minor version.
    static var compilerVersion: String {
        #if compiler(>=6.5)
            "6.5 or later"
        #elseif compiler(>=6.4)
            "6.4"
        #elseif compiler(>=6.3)
            "6.3"
        #elseif compiler(>=6.2)
            "6.2"
        #elseif compiler(>=6.1)
            "6.1"
        #else
            "6.0"
        #endif
    }

    private static func cpuModel() -> String {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown CPU" }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            if let colon = line.firstIndex(of: ":") {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return "unknown CPU"
    }

    private static func memoryMegabytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("MemTotal:") {
            let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first
            return kilobytes.map { $0 / 1024 }
        }
        return nil
    }

    private static func kernel() -> String {
        var names = utsname()
        uname(&names)
        return withUnsafeBytes(of: &names.release) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
    }

    /// `git rev-parse HEAD` in the current directory, when git is installed and it is a checkout.
    private static func gitCommit() -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "rev-parse", "HEAD"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return nil
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    /// The three load averages of `/proc/loadavg`.
    public static func loadAverage() -> String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }
}
