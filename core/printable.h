#pragma once
// Text from a file (a layer name in a manifest, a file name, a run field) as it may be printed:
// a terminal, an HTML page or a JSON parser reads what parity writes, and a name holding ESC [2J,
// an OSC title sequence, a newline or bytes that are not UTF-8 would clear the screen, break the
// table or make the JSON writer throw. Those are written as visible escapes instead.
#include <string>
#include <string_view>

namespace parity {

// `text` with every C0 control (NUL and newline included), DEL and C1 control written as \xNN
// (C1 as \u00NN), and every byte that is not part of valid UTF-8 as \xNN. Printable text, valid
// UTF-8 included, is returned unchanged, so printable(printable(t)) == printable(t): a name
// escaped when read is not escaped again in a message that quotes it.
//
// `names`: a name that identifies something (a layer, a role, a source), for which two different
// texts must stay different: a backslash is doubled too, so the byte 0x01 (shown \x01) and the
// four characters \x01 (shown \\x01) never pair as one layer. Not idempotent then: escape once.
std::string printable(std::string_view text, bool names = false);

}  // namespace parity
