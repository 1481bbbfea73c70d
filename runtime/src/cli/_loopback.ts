/** The one test of whether a host is this machine, the client core's: the commands and the core never disagree. */
export { isLoopbackHost } from '../client/_loopback.js'
