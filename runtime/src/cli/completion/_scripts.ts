import type { CompletionNode } from './_tree.js'

/**
 * Completion scripts for bash, zsh and fish, generated from the command tree: the words that may follow a command
 * (its subcommands, its long options, its arguments' choices), and an option's values when they are fixed (else
 * file names). Each shell walks the words typed so far to find the command, stepping over options and their values.
 */
export type Shell = 'bash' | 'zsh' | 'fish'
export const SHELLS: readonly Shell[] = ['bash', 'zsh', 'fish']

export function completionScript(shell: Shell, nodes: readonly CompletionNode[], name: string): string {
  const fn = `_${name.replace(/\W/g, '_')}`
  switch (shell) {
    case 'bash':
      return bashScript(nodes, name, fn)
    case 'zsh':
      return zshScript(nodes, name, fn)
    case 'fish':
      return fishScript(nodes, name, `_${fn}`)
  }
}

/** Single-quoted for sh, bash, zsh and fish alike (none of the words holds a quote or a backslash). */
const quote = (word: string) => `'${word.replace(/['\\]/g, '')}'`

/** The case table shared by bash and zsh (both read POSIX case): path → words, space-separated on one line. */
function shCases(nodes: readonly CompletionNode[], words: (node: CompletionNode) => string[]): string {
  return nodes.map((node) => `    ${quote(node.path)}) echo ${words(node).map(quote).join(' ') || "''"} ;;`).join('\n')
}

function shValueCases(nodes: readonly CompletionNode[]): string {
  const lines: string[] = []
  for (const node of nodes)
    for (const [flag, choices] of node.valueOptions)
      lines.push(
        `    ${quote(`${node.path}|${flag}`)}) echo ${choices?.length ? choices.map(quote).join(' ') : "'<file>'"} ;;`,
      )
  return lines.join('\n')
}

/** Functions both bash and zsh run: the tables, and the walk from the typed words to the command. */
function shFunctions(nodes: readonly CompletionNode[], fn: string): string {
  return `${fn}_subcommands() {
  case "$1" in
${shCases(nodes, (node) => node.subcommands)}
  esac
}
${fn}_options() {
  case "$1" in
${shCases(nodes, (node) => node.options)}
  esac
}
${fn}_arguments() {
  case "$1" in
${shCases(nodes, (node) => node.argumentChoices)}
  esac
}
# An option that takes a value: its choices, or <file> for anything; nothing when it takes none.
${fn}_values() {
  case "$1|$2" in
${shValueCases(nodes)}
  esac
}
# The command the words typed so far name ("task get"), stepping over options and their values.
${fn}_command() {
  local cmd="" word skip=""
  for word in "$@"; do
    if [ -n "$skip" ]; then skip=""; continue; fi
    case "$word" in
      --*=*) continue ;;
      -*) [ -n "$(${fn}_values "$cmd" "$word")" ] && skip=1; continue ;;
    esac
    case " $(${fn}_subcommands "$cmd") " in
      *" $word "*) cmd="\${cmd:+$cmd }$word" ;;
    esac
  done
  echo "$cmd"
}
# The candidates for the word being typed ($3) after the previous one ($2) in command $1.
${fn}_candidates() {
  local values
  values="$(${fn}_values "$1" "$2")"
  if [ -n "$values" ]; then
    [ "$values" != '<file>' ] && echo "$values"
    return
  fi
  case "$3" in
    -*) ${fn}_options "$1" ;;
    *) echo "$(${fn}_subcommands "$1") $(${fn}_arguments "$1")" ;;
  esac
}`
}

function bashScript(nodes: readonly CompletionNode[], name: string, fn: string): string {
  return `# ${name} completion for bash. Load it with: source <(${name} completion bash)
${shFunctions(nodes, fn)}
${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" cmd
  [ "$COMP_CWORD" -gt 1 ] && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  cmd="$(${fn}_command "\${COMP_WORDS[@]:1:COMP_CWORD-1}")"
  COMPREPLY=($(compgen -W "$(${fn}_candidates "$cmd" "$prev" "$cur")" -- "$cur"))
}
complete -o default -F ${fn} ${name}
`
}

function zshScript(nodes: readonly CompletionNode[], name: string, fn: string): string {
  return `#compdef ${name}
# ${name} completion for zsh. Load it with: source <(${name} completion zsh), or save it as ${fn} in a folder of $fpath.
${shFunctions(nodes, fn)}
${fn}() {
  local cmd prev="" values
  local -a candidates
  (( CURRENT > 2 )) && prev="\${words[CURRENT-1]}"
  cmd="$(${fn}_command "\${(@)words[2,CURRENT-1]}")"
  values="$(${fn}_values "$cmd" "$prev")"
  if [[ "$values" == '<file>' ]]; then
    _files
    return
  fi
  candidates=(\${=$(${fn}_candidates "$cmd" "$prev" "\${words[CURRENT]}")})
  compadd -- "\${candidates[@]}"
}
if [[ "\${funcstack[1]}" == "${fn}" ]]; then
  ${fn} "$@"
else
  compdef ${fn} ${name}
fi
`
}

function fishScript(nodes: readonly CompletionNode[], name: string, fn: string): string {
  const cases = (words: (node: CompletionNode) => string[]) =>
    nodes
      .map((node) => `    case ${quote(node.path)}\n        printf '%s\\n' ${words(node).map(quote).join(' ')}`)
      .join('\n')
  const valueCases: string[] = []
  for (const node of nodes)
    for (const [flag, choices] of node.valueOptions)
      valueCases.push(
        `    case ${quote(`${node.path}|${flag}`)}\n        printf '%s\\n' ${choices?.length ? choices.map(quote).join(' ') : "'<file>'"}`,
      )
  return `# ${name} completion for fish. Load it with: ${name} completion fish | source
function ${fn}_subcommands
    switch "$argv[1]"
${cases((node) => node.subcommands)}
    end
end
function ${fn}_options
    switch "$argv[1]"
${cases((node) => node.options)}
    end
end
function ${fn}_arguments
    switch "$argv[1]"
${cases((node) => node.argumentChoices)}
    end
end
function ${fn}_values
    switch "$argv[1]|$argv[2]"
${valueCases.join('\n')}
    end
end
# The command the words typed so far name ("task get"), stepping over options and their values.
function ${fn}_command
    set -l cmd ''
    set -l skip 0
    for word in $argv
        if test $skip = 1
            set skip 0
            continue
        end
        if string match -q -- '--*=*' $word
            continue
        else if string match -q -- '-*' $word
            if test -n "$(${fn}_values "$cmd" $word)"
                set skip 1
            end
            continue
        end
        if contains -- $word (${fn}_subcommands "$cmd")
            set cmd (string trim -- "$cmd $word")
        end
    end
    echo $cmd
end
function ${fn}
    set -l tokens (commandline -opc)
    set -l cur (commandline -ct)
    set -l cmd (${fn}_command $tokens[2..-1])
    set -l values (${fn}_values "$cmd" $tokens[-1])
    if test "$values" = '<file>'
        __fish_complete_path $cur
    else if test -n "$values"
        printf '%s\\n' $values
    else if string match -q -- '-*' $cur
        ${fn}_options "$cmd"
    else
        ${fn}_subcommands "$cmd"
        ${fn}_arguments "$cmd"
    end
end
complete -c ${name} -f -a '(${fn})'
`
}
