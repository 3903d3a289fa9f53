package dev.settle.testbroker;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.annotation.Annotation;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.ClassDescriptor;
import org.junit.jupiter.api.ClassOrdererContext;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.platform.commons.support.AnnotationSupport;

class ReliabilityClassesFirstTest {
    static class Quick {}

    @Tag("reliability")
    static class Kills {}

    @Tag("slow")
    static class Other {}

    @Tag("reliability")
    static class Restarts {}

    @Test
    void reliabilityClassesComeFirstAndEveryClassKeepsItsOrderWithinItsGroup() {
        List<Descriptor> classes = Stream.of(Quick.class, Kills.class, Other.class, Restarts.class)
                .map(Descriptor::new)
                .collect(ArrayList::new, List::add, List::addAll);

        new ReliabilityClassesFirst().orderClasses(new Context(classes));

        assertThat(classes.stream().map(Descriptor::getTestClass))
                .containsExactly(Kills.class, Restarts.class, Quick.class, Other.class);
    }

    /** JUnit's view of a test class, read from the class's own annotations. */
    private record Descriptor(Class<?> getTestClass) implements ClassDescriptor {
        @Override
        public String getDisplayName() {
            return getTestClass.getSimpleName();
        }

        @Override
        public boolean isAnnotated(Class<? extends Annotation> annotationType) {
            return AnnotationSupport.isAnnotated(getTestClass, annotationType);
        }

        @Override
        public <A extends Annotation> Optional<A> findAnnotation(Class<A> annotationType) {
            return AnnotationSupport.findAnnotation(getTestClass, annotationType);
        }

        @Override
        public <A extends Annotation> List<A> findRepeatableAnnotations(Class<A> annotationType) {
            return AnnotationSupport.findRepeatableAnnotations(getTestClass, annotationType);
        }
    }

    private record Context(List<Descriptor> getClassDescriptors) implements ClassOrdererContext {
        @Override
        public Optional<String> getConfigurationParameter(String key) {
            return Optional.empty();
        }
    }
}
