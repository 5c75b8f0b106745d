// Ctrl-C for commands that run work (exec, job run): the first SIGINT sets
// a flag the command polls, so it can stop its ranks or cancel its run and
// still print what was measured; another SIGINT a second or more later
// ends the process at once (exit 130). Children forked after Install
// inherit it.
#ifndef RESHARD_CLIENT_INTERRUPT_H_
#define RESHARD_CLIENT_INTERRUPT_H_

namespace reshard::client {

// Installs the one-shot SIGINT handler (idempotent).
void InstallInterruptHandler();
// True once SIGINT arrived after InstallInterruptHandler. Async-signal-safe.
bool Interrupted();

}  // namespace reshard::client

#endif  // RESHARD_CLIENT_INTERRUPT_H_
