/**
 * `readfile-utf8/register`: loading it (`node -r readfile-utf8/register` or
 * `node --import readfile-utf8/register`) replaces `fs.readFileSync`,
 * `fs.readFile` and `fs.promises.readFile` with readfile-utf8's drop-ins, which
 * serve UTF-8 requests natively and pass every other call to fs unchanged.
 */
/** Installs the drop-ins into fs (done on load; idempotent). */
export declare function register(): void
/** Restores the fs functions that were there when readfile-utf8/register was loaded. */
export declare function unregister(): void
/** True while readfile-utf8's functions are installed in fs. */
export declare function isRegistered(): boolean
