// The `a2a` command's errors that reach the user: printed as one line, without a stack (main.ts).

/** A problem the user can fix in their project; printed without a stack. */
export class ProjectError extends Error {
  override name = 'ProjectError'
}
