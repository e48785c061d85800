export async function verifyArchive() { throw new Error("not yet"); }
