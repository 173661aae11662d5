import Foundation
import LogbookApplication
import LogbookCommandLine
import LogbookCrypto
import LogbookPostgres
import LogbookSQLite
import LogbookServer

/// How a process that reads or writes the log opens the vault of personal data: the key
/// store beside the log (`DATA_DIR/keys.sqlite3`, or tables in the log's PostgreSQL
/// database) and the master key from `--master-key` / `LOGBOOK_MASTER_KEY`, else the data
/// directory's `master.key`. A new log with neither gets a new `master.key`, said in the
/// process log, so that `up` and every script keep working; production keeps the master
/// key elsewhere and names it. A missing, unreadable or wrong master key for a key store
/// that holds keys stops the start with one line and exit status 3, before anything is
/// served or written.
enum VaultOpening {
    /// The name of the master key file a data directory holds when no other is named.
    static let defaultMasterKeyFile = "master.key"
    /// The name of the SQLite key store in a data directory.
    static let keyStoreFile = "keys.sqlite3"

    static func open(
        _ location: StorageSettings.Location, configuration: Configuration, diagnostics: Diagnostics
    ) throws(CLIError) -> PersonalDataVault {
        let keyStore = try openKeyStore(location, configuration: configuration)
        let master = try masterKey(configuration: configuration, keyStore: keyStore, diagnostics: diagnostics)
        return try vault(master.key, from: master.path, over: keyStore)
    }

    /// The vault of a SQLite log in the data directory, for a command that only reads it
    /// (`verify`): nil when the directory has no key store (a log written before personal
    /// data was sealed); never makes a master key.
    static func openForReading(configuration: Configuration) throws(CLIError) -> PersonalDataVault? {
        guard FileManager.default.fileExists(atPath: configuration.path(keyStoreFile)) else { return nil }
        let keyStore = try openKeyStore(.sqlite, configuration: configuration)
        let path = configuration.masterKeyPath ?? configuration.path(defaultMasterKeyFile)
        return try vault(try readMasterKey(path), from: path, over: keyStore)
    }

    /// The vault of `master` (read from `path`) over `keyStore`, refused when the store was
    /// written under another master key.
    private static func vault(_ master: MasterKey, from path: String, over keyStore: any PersonKeyStore)
        throws(CLIError) -> PersonalDataVault
    {
        do {
            return try PersonalDataVault(master: master, keyStore: keyStore)
        } catch .wrongMasterKey {
            throw .unavailable(
                "the master key \(path) is not the one the key store was written under; "
                    + "personal data stays sealed: give the right one with --master-key")
        } catch {
            throw .unavailable(error.description)
        }
    }

    /// The master key in the file at `path`.
    private static func readMasterKey(_ path: String) throws(CLIError) -> MasterKey {
        do {
            return try MasterKey.read(path: path)
        } catch {
            throw .unavailable("cannot use the master key: \(error)")
        }
    }

    private static func openKeyStore(_ location: StorageSettings.Location, configuration: Configuration)
        throws(CLIError) -> any PersonKeyStore
    {
        do {
            switch location {
            case .sqlite:
                try configuration.ensureDataDirectory()
                return try SQLitePersonKeyStore(path: configuration.path(keyStoreFile))
            case .postgres(let connectionString):
                return try PostgresPersonKeyStore(url: connectionString)
            }
        } catch let error as CLIError {
            throw error
        } catch {
            let message = "\(error)"
            if case .postgres(let connectionString) = location {
                throw .unavailable(StorageSettings.redacting(connectionString, in: message))
            }
            throw .unavailable(message)
        }
    }

    /// The master key named by the settings, else the data directory's, made when the key
    /// store holds no keys yet.
    private static func masterKey(
        configuration: Configuration, keyStore: any PersonKeyStore, diagnostics: Diagnostics
    ) throws(CLIError) -> (key: MasterKey, path: String) {
        if let named = configuration.masterKeyPath { return (try readMasterKey(named), named) }
        let path = configuration.path(defaultMasterKeyFile)
        if FileManager.default.fileExists(atPath: path) { return (try readMasterKey(path), path) }
        let check: [UInt8]?
        do {
            check = try keyStore.masterKeyCheck()
        } catch {
            throw .unavailable(error.description)
        }
        guard check == nil else {
            throw .unavailable(
                "the key store holds keys sealed under a master key, and none was given "
                    + "(--master-key, LOGBOOK_MASTER_KEY) or found at \(path)")
        }
        let key = MasterKey.generate()
        try configuration.ensureDataDirectory()
        do {
            try key.write(to: path)
        } catch {
            throw .unavailable("cannot write a new master key: \(error)")
        }
        diagnostics.info(
            "made a new master key for the personal data; keep it safe, and name it with --master-key in production",
            ["path": path])
        return (key, path)
    }
}
