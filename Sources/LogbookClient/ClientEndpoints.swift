import LogbookApplication
import LogbookJSON
public import LogbookZMQ

/// Where the servers listen (libzmq endpoint strings): the same settings the service's
/// processes use. The defaults are the service's defaults on this machine (ARCHITECTURE §2).
public typealias ClientEndpoints = ServiceEndpoints

extension ServiceEndpoints {
    /// The endpoint string of a request/reply server.
    public func address(of server: ServerEndpoint) -> String {
        switch server {
        case .commands: commands
        case .queries: queries
        case .log: log
        }
    }
}
