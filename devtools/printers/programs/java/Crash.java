// A JVM that crashes in native code (a write to address 0 through Unsafe): HotSpot's error handler
// prints its '#'-framed header (vmError.cpp VMError::report) to stdout: `java Crash`.
import java.lang.reflect.Field;
import sun.misc.Unsafe;

public class Crash {
    public static void main(String[] args) throws Exception {
        Field f = Unsafe.class.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        Unsafe unsafe = (Unsafe) f.get(null);
        System.err.println("loading shard 7");
        unsafe.putAddress(0, 42);
    }
}
