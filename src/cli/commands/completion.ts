// completion bash|zsh: a completion script generated from the command tree itself (commands, their
// options, and the choices of arguments and options), so it never lags behind a new command.
import { Argument, type Command } from 'commander';
import type { Io } from '../context.js';

interface Words {
  name: string;
  description: string;
  /** First-argument choices and the option flags. */
  words: string[];
  /** Option flags whose value is one of these choices. */
  valued: Array<{ flags: string[]; choices: string[] }>;
}

/** What completes after each command, read from commander's tree. */
export function completionWords(program: Command): Words[] {
  return program.commands.map((c) => {
    const options = c.options.filter((o) => !o.hidden);
    const flags = options.flatMap((o) => [o.short, o.long].filter((f): f is string => !!f));
    return {
      name: c.name(),
      description: c.description(),
      words: [...(c.registeredArguments[0]?.argChoices ?? []), ...flags, '--help'],
      valued: options
        .filter((o) => o.argChoices)
        .map((o) => ({ flags: [o.short, o.long].filter((f): f is string => !!f), choices: o.argChoices! })),
    };
  });
}

const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

export function bashCompletion(program: Command): string {
  const cmds = completionWords(program);
  const globals = program.options.flatMap((o) => [o.short, o.long].filter(Boolean)).join(' ');
  const valued = cmds.flatMap((c) =>
    c.valued.map(
      (v) =>
        `    ${c.name}:${v.flags.join('|' + c.name + ':')}) COMPREPLY=( $(compgen -W ${shq(v.choices.join(' '))} -- "$cur") ); return ;;`,
    ),
  );
  return [
    '# quarry bash completion: eval "$(quarry completion bash)" (generated from the command tree)',
    '_quarry() {',
    '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" cmd="" i',
    '  for (( i = 1; i < COMP_CWORD; i++ )); do',
    '    case "${COMP_WORDS[i]}" in --server) (( i++ )) ;; -*) ;; *) cmd="${COMP_WORDS[i]}"; break ;; esac',
    '  done',
    '  if [ -z "$cmd" ]; then',
    `    COMPREPLY=( $(compgen -W ${shq(`${cmds.map((c) => c.name).join(' ')} ${globals} --help`)} -- "$cur") ); return`,
    '  fi',
    '  case "$cmd:$prev" in',
    ...valued,
    '  esac',
    '  case "$cmd" in',
    ...cmds.map((c) => `    ${c.name}) COMPREPLY=( $(compgen -W ${shq(c.words.join(' '))} -- "$cur") ) ;;`),
    '  esac',
    '}',
    'complete -F _quarry quarry',
  ].join('\n');
}

export function zshCompletion(program: Command): string {
  const cmds = completionWords(program);
  const zq = (s: string): string => s.replace(/[:'\\]/g, (ch) => (ch === "'" ? "'\\''" : `\\${ch}`));
  return [
    '#compdef quarry',
    '# quarry zsh completion: eval "$(quarry completion zsh)" (generated from the command tree)',
    '_quarry() {',
    '  local -a commands',
    `  commands=(${cmds.map((c) => `'${zq(c.name)}:${zq(c.description)}'`).join(' ')})`,
    '  if (( CURRENT == 2 )); then _describe command commands; return; fi',
    '  case "$words[2]:$words[CURRENT-1]" in',
    ...cmds.flatMap((c) =>
      c.valued.map((v) => `    ${v.flags.map((f) => `${c.name}:${f}`).join('|')}) compadd -- ${v.choices.join(' ')}; return ;;`),
    ),
    '  esac',
    '  case "$words[2]" in',
    ...cmds.map((c) => `    ${c.name}) compadd -- ${c.words.join(' ')} ;;`),
    '  esac',
    '}',
    'compdef _quarry quarry',
  ].join('\n');
}

export function registerCompletion(program: Command, io: Io): void {
  program
    .command('completion')
    .description('print a shell completion script: eval "$(quarry completion bash)" in ~/.bashrc, or zsh')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh']))
    .action((shell: string) => io.out(shell === 'bash' ? bashCompletion(program) : zshCompletion(program)));
}
