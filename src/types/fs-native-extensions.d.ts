// The subset of fs-native-extensions this package uses; the package ships no types.
declare module 'fs-native-extensions' {
  const extensions: {
    tryLock(fd: number, options?: { shared?: boolean }): boolean;
    unlock(fd: number): void;
  };
  export default extensions;
}
