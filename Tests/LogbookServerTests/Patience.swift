/// The upper bound, in milliseconds, of a wait for something that must happen (a reply, a feed
/// message, a counter reaching a value): far beyond what it takes on a loaded machine, so that
/// only a broken property runs it out, never a slow machine. Every wait ends as soon as what
/// it waits for happens, so a passing test never waits this long.
let patienceMilliseconds = 120_000
