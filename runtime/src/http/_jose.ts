// jose, loaded on first use: only OpenID Connect (a token to verify) and card signing (a card to sign) need it, and
// its 46 modules were a fifth of every `a2a start`'s module loading (about 25 ms on Node 20) for agents using neither.
type Jose = typeof import('jose')

let jose: Promise<Jose> | undefined

export const loadJose = (): Promise<Jose> => (jose ??= import('jose'))
